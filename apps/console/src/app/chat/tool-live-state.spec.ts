import { describe, expect, it } from 'vitest';
import type { ElicitationRequestEvent } from '@cashcode/contracts';

import { elicitationCard, elicitationContent, elicitationFields, progressPercent } from './tool-live-state';

const request: ElicitationRequestEvent = {
  event: 'elicitation_request',
  chat_id: 'c1',
  elicitation_id: 'elicit_1',
  call_id: 'call_1',
  tool_name: 'mcp_everything_trigger-elicitation-request',
  server: 'everything',
  message: 'Please provide inputs',
  requested_schema: {
    type: 'object',
    properties: {
      name: { type: 'string', title: 'Name' },
      check: { type: 'boolean', title: 'Agree' },
      integer: { type: 'integer', default: 42 },
      pet: { type: 'string', enum: ['pet-1', 'pet-2'], enumNames: ['Cats', 'Dogs'] },
      fish: { type: 'array', items: { anyOf: [{ const: 'fish-1', title: 'Tuna' }] } },
    },
    required: ['name'],
  },
  timeout_sec: 600,
};

describe('tool live state', () => {
  it('Scenario: progress becomes a percentage only when the total is known', () => {
    expect(progressPercent({ progress: 2, total: 3 })).toBe(67);
    expect(progressPercent({ progress: 5 })).toBeNull();
  });

  it('Scenario: a requested schema becomes form fields with labels, kinds, options and defaults', () => {
    const fields = elicitationFields(request.requested_schema);
    expect(fields.map((f) => [f.name, f.kind, f.required])).toEqual([
      ['name', 'text', true],
      ['check', 'boolean', false],
      ['integer', 'integer', false],
      ['pet', 'select', false],
      ['fish', 'multiselect', false],
    ]);
    expect(fields[3]!.options).toEqual([
      { value: 'pet-1', label: 'Cats' },
      { value: 'pet-2', label: 'Dogs' },
    ]);
    expect(fields[2]!.default).toBe(42);
    expect(elicitationCard(request)).toMatchObject({ id: 'elicit_1', server: 'everything', status: 'open' });
  });

  it('Scenario: the accepted content leaves out empty optional fields and needs the required ones', () => {
    const fields = elicitationFields(request.requested_schema);
    expect(elicitationContent(fields, { name: ' ' })).toEqual({ ok: false, missing: 'Name' });
    expect(elicitationContent(fields, { name: 'Cash', integer: '7', check: true, fish: [] })).toEqual({
      ok: true,
      content: { name: 'Cash', check: true, integer: 7 },
    });
  });
});
