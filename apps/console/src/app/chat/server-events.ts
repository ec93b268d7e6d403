/**
 * Applies one server event to the chat state: the event's name picks its handler (turn-events.ts for the chat and
 * its turn, tool-events.ts for one tool call, turn-replay.ts for a running turn sent again from its start). Events
 * without a handler (`pong`, `message`, `usage_warning`, names this console does not know) change nothing.
 */
import type { ServerEvent } from '@cashcode/contracts';

import type { ChatState } from './chat-types';
import type { ServerEventHandlers } from './server-event-handler';
import { SUBAGENT_EVENT_HANDLERS } from './subagent-events';
import { TOOL_EVENT_HANDLERS } from './tool-events';
import { TURN_EVENT_HANDLERS } from './turn-events';
import { applyTurnReplay } from './turn-replay';

const SERVER_EVENT_HANDLERS: ServerEventHandlers = {
  ...TURN_EVENT_HANDLERS,
  ...TOOL_EVENT_HANDLERS,
  ...SUBAGENT_EVENT_HANDLERS,
  turn_replay: (state, event) => applyTurnReplay(state, event, reduceServerEvent),
};

/** Applies one server event. Unknown or irrelevant events return the state unchanged. */
export function reduceServerEvent(state: ChatState, event: ServerEvent): ChatState {
  // own properties only: an event named like an Object.prototype member (`toString`) has no handler
  if (!Object.hasOwn(SERVER_EVENT_HANDLERS, event.event)) return state;
  const handler = SERVER_EVENT_HANDLERS[event.event] as ((state: ChatState, event: ServerEvent) => ChatState) | undefined;
  return handler ? handler(state, event) : state;
}
