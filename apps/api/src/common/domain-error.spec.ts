import { DomainError, validationProblem } from './domain-error';
import { buildProblem, toProblemInit } from './problem-details.filter';
import { PROBLEM_TYPES } from './problem-details';

type ExampleCode = 'missing' | 'invalid';

class ExampleError extends DomainError<ExampleCode> {
  constructor(code: ExampleCode, message: string) {
    super(code, message, code === 'missing' ? { status: 404 } : validationProblem([{ field: 'name', message }], 'example_invalid'));
  }
}

describe(DomainError.name, () => {
  it('Scenario: a coded domain error is rendered as problem+json with its status, detail and code', () => {
    const error = new ExampleError('missing', 'example not found');
    expect(error).toMatchObject({ name: 'ExampleError', code: 'missing', httpStatus: 404 });
    expect(buildProblem(toProblemInit(error)!, { path: '/api/examples/a' }, 'req-1')).toEqual({
      type: 'about:blank',
      title: 'Not Found',
      status: 404,
      detail: 'example not found',
      instance: '/api/examples/a',
      requestId: 'req-1',
      code: 'missing',
    });
  });

  it('Scenario: a validation problem carries its type, problem code and field errors', () => {
    const problem = buildProblem(toProblemInit(new ExampleError('invalid', 'name is too long'))!, { path: '/api/examples' });
    expect(problem).toMatchObject({
      type: PROBLEM_TYPES.validation,
      status: 422,
      detail: 'name is too long',
      code: 'example_invalid',
      errors: [{ field: 'name', message: 'name is too long' }],
    });
  });

  it('renders additive problem members without letting them override the standard ones', () => {
    class WithExtras extends DomainError<'invalid'> {
      constructor() {
        super('invalid', 'member refused', {
          ...validationProblem([{ field: 'file', message: 'member refused' }]),
          extensions: { member: 'scripts/a.xsd', limit: 5, status: 200, detail: 'other', skipped: undefined },
        });
      }
    }
    const problem = buildProblem(toProblemInit(new WithExtras())!, { path: '/api/skills/import' });
    expect(problem).toMatchObject({ status: 422, detail: 'member refused', member: 'scripts/a.xsd', limit: 5 });
    expect('skipped' in problem).toBe(false);
  });
});
