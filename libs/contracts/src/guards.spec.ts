import { API_PATHS, apiPath } from './api-paths';
import { isErrorCode, isRecord } from './guards';

describe('isRecord', () => {
  it('accepts plain objects only', () => {
    expect(isRecord({})).toBe(true);
    expect(isRecord({ a: 1 })).toBe(true);
    expect(isRecord(null)).toBe(false);
    expect(isRecord([])).toBe(false);
    expect(isRecord('x')).toBe(false);
    expect(isRecord(undefined)).toBe(false);
  });
});

describe('isErrorCode', () => {
  it('matches a string code among the given ones', () => {
    const error = Object.assign(new Error('gone'), { code: 'ENOENT' });
    expect(isErrorCode(error, 'ENOENT')).toBe(true);
    expect(isErrorCode(error, 'EEXIST', 'ENOENT')).toBe(true);
    expect(isErrorCode(error, 'EEXIST')).toBe(false);
    expect(isErrorCode({ code: 42 }, '42')).toBe(false);
    expect(isErrorCode(null, 'ENOENT')).toBe(false);
    expect(isErrorCode('ENOENT', 'ENOENT')).toBe(false);
  });
});

describe('apiPath', () => {
  it('appends URL-encoded segments to a base path', () => {
    expect(apiPath(API_PATHS.sessions, 'a/b c', 'messages')).toBe('/api/sessions/a%2Fb%20c/messages');
    expect(apiPath(API_PATHS.skills)).toBe('/api/skills');
    expect(apiPath(API_PATHS.skills, 'x', 'rollback', 3)).toBe('/api/skills/x/rollback/3');
  });
});
