/** What the channel framework says by itself in a conversation, and the timings around it. */
export const SHUTDOWN_NOTICE = '_(the server is restarting: this answer stopped here; send your message again)_';
export const SHUTDOWN_NOTICE_MS = 1_000;

/** how long a turn may go without text before the conversation shows "typing…" */
export const TYPING_DELAY_MS = 500;

export const HELP = [
  'Commands:',
  '/new: start a new chat',
  '/stop: stop the running answer',
  '/model: show the model that answers',
].join('\n');

/** an unknown sender is told their (unchanged) pairing code again at most this often */
export const PAIRING_REPLY_INTERVAL_MS = 60_000;
