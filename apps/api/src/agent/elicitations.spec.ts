import type { AppConfig } from '../config/app-config';
import { ElicitationsService, validateElicitationContent, type ElicitationContext } from './elicitations';

const schema = {
  type: 'object',
  properties: {
    name: { type: 'string', maxLength: 5 },
    age: { type: 'integer', minimum: 1, maximum: 100 },
    pet: { type: 'string', enum: ['cat', 'dog'] },
  },
  required: ['name'],
};

function context(events: unknown[], signal = new AbortController().signal): ElicitationContext {
  return {
    chatId: 'c1',
    callId: 'call_1',
    toolName: 'mcp_s_t',
    server: 's',
    message: 'Who are you?',
    requestedSchema: schema,
    signal,
    emit: (event) => events.push(event),
  };
}

describe('ElicitationsService', () => {
  it('Scenario: an elicitation without an attached client is declined', async () => {
    const service = new ElicitationsService({ approvalTimeoutSec: 60 } as AppConfig);
    const events: unknown[] = [];
    await expect(service.request(context(events))).resolves.toEqual({ action: 'decline' });
    expect(events).toEqual([]);
  });

  it('Scenario: an unanswered elicitation is cancelled at the timeout', async () => {
    jest.useFakeTimers();
    try {
      const service = new ElicitationsService({ approvalTimeoutSec: 1 } as AppConfig);
      service.setAudience(() => true);
      const events: Array<{ event: string; action?: string }> = [];
      const outcome = service.request(context(events));
      expect(service.pendingRequests('c1')).toHaveLength(1);
      jest.advanceTimersByTime(1000);
      await expect(outcome).resolves.toEqual({ action: 'cancel' });
      expect(events.map((e) => [e.event, e.action])).toEqual([
        ['elicitation_request', undefined],
        ['elicitation_resolved', 'cancel'],
      ]);
      expect(service.pendingRequests('c1')).toEqual([]);
    } finally {
      jest.useRealTimers();
    }
  });

  it('Scenario: accepted content is validated against the requested schema', () => {
    expect(validateElicitationContent(schema, { name: 'Cash', age: 30, pet: 'cat' })).toBeNull();
    expect(validateElicitationContent(schema, {})).toBe('name is required');
    expect(validateElicitationContent(schema, { name: 'toolong' })).toBe('name is too long');
    expect(validateElicitationContent(schema, { name: 'a', age: 1.5 })).toBe('age must be an integer');
    expect(validateElicitationContent(schema, { name: 'a', pet: 'fish' })).toBe('pet must be one of cat, dog');
    expect(validateElicitationContent(schema, { name: 'a', extra: 1 })).toBe('extra is not a requested field');
  });
});
