import type { WebSocket } from 'ws';
import { WsChatConnection } from './chat.gateway';

/** A WebSocket and its TCP socket that record what happens to them, in order. */
function fakes(): { log: string[]; socket: WebSocket; raw: { destroyed: boolean; cork(): void; uncork(): void } } {
  const log: string[] = [];
  const socket = { send: (text: string) => log.push(`send ${text}`), readyState: 1, bufferedAmount: 0 } as unknown as WebSocket;
  const raw = { destroyed: false, cork: () => log.push('cork'), uncork: () => log.push('uncork') };
  return { log, socket, raw };
}

describe('WsChatConnection', () => {
  it('frames of one tick go out between one cork and one uncork of the upgrade request socket; an urgent first frame goes at once', async () => {
    const { log, socket, raw } = fakes();
    const connection = new WsChatConnection('client-1', socket, raw);
    connection.send('delta', true);
    connection.send('tool_call', false);
    connection.send('done', false);
    expect(log).toEqual(['send delta', 'cork', 'send tool_call', 'send done']);
    await new Promise((resolve) => process.nextTick(resolve));
    expect(log).toEqual(['send delta', 'cork', 'send tool_call', 'send done', 'uncork']);
  });

  it('without the request socket every frame is written at once', () => {
    const { log, socket } = fakes();
    const connection = new WsChatConnection('client-2', socket, null);
    connection.send('a', false);
    connection.send('b', true);
    expect(log).toEqual(['send a', 'send b']);
  });
});
