/**
 * The shape of one server event's handler: a pure function from the chat state and that event to the next state.
 * turn-events.ts and tool-events.ts each hold a table of them, keyed by event name; server-events.ts dispatches.
 */
import type { ServerEvent, ServerEventName } from '@cashcode/contracts';

import type { ChatState } from './chat-types';

export type ServerEventOf<K extends ServerEventName> = Extract<ServerEvent, { event: K }>;

export type ServerEventHandler<K extends ServerEventName> = (state: ChatState, event: ServerEventOf<K>) => ChatState;

/** Handlers by event name; an event without one leaves the state unchanged. */
export type ServerEventHandlers = { readonly [K in ServerEventName]?: ServerEventHandler<K> };
