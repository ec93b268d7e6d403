import { promises as fs, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiTokenFileError, loadOrCreateApiToken } from './api-token-file';
import { SignInCodes } from './console-sign-in';

describe('the API token file', () => {
  let dir: string;
  let file: string;
  beforeEach(async () => {
    dir = await fs.mkdtemp(join(tmpdir(), 'cashcode-token-'));
    file = join(dir, 'config', 'settings', 'api-token');
  });
  afterEach(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('Scenario: the token file is created once and reused', async () => {
    const first = await loadOrCreateApiToken(file);
    expect(first).toMatchObject({ source: 'file', file, created: true });
    expect(first.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'config', 'settings')).mode & 0o777).toBe(0o700);
    expect(await fs.readFile(file, 'utf8')).toBe(`${first.token}\n`);
    const second = await loadOrCreateApiToken(file);
    expect(second).toEqual({ token: first.token, source: 'file', file, created: false });
    // no temp files are left behind
    expect(await fs.readdir(join(dir, 'config', 'settings'))).toEqual(['api-token']);
  });

  it('Scenario: a token file readable by other accounts is replaced', async () => {
    const first = await loadOrCreateApiToken(file);
    await fs.chmod(file, 0o644);
    const replaced = await loadOrCreateApiToken(file);
    expect(replaced.replaced).toBe(true);
    expect(replaced.token).not.toBe(first.token);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('Scenario: a token file that holds no token stops the start', async () => {
    await fs.mkdir(join(dir, 'config', 'settings'), { recursive: true, mode: 0o700 });
    for (const content of ['', 'short\n', 'has a space in it 0123456789\n', 'x'.repeat(600)]) {
      await fs.writeFile(file, content, { mode: 0o600 });
      await expect(loadOrCreateApiToken(file)).rejects.toThrow(
        `${file} does not hold an API token (one line of 16 to 512 printable characters without spaces); delete it and start again to create a new one`,
      );
    }
    await fs.rm(file);
    await fs.symlink(join(dir, 'elsewhere'), file);
    await expect(loadOrCreateApiToken(file)).rejects.toThrow(ApiTokenFileError);
    await expect(loadOrCreateApiToken(file)).rejects.toThrow('is not a regular file');
  });
});

describe('sign-in codes', () => {
  it('Scenario: a sign-in code works once and only within its lifetime', () => {
    let now = 1_000;
    const codes = new SignInCodes(60_000, () => now);
    expect(codes.redeem('anything')).toBe('invalid');
    const code = codes.issue();
    expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(codes.redeem(undefined)).toBe('invalid');
    expect(codes.redeem(`${code}x`)).toBe('invalid');
    expect(codes.redeem(code)).toBe('ok');
    expect(codes.redeem(code)).toBe('used');

    const late = codes.issue();
    expect(codes.redeem(code)).toBe('invalid');
    now += 60_000;
    expect(codes.redeem(late)).toBe('expired');
  });
});
