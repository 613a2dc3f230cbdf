import { describe, expect, it } from 'vitest';
import { createSandbox } from '../../src/sandbox/index.js';

describe('createSandbox publicUrl', () => {
  it('is the base URL, as an origin without a trailing slash', async () => {
    const sandbox = createSandbox({ publicUrl: 'http://sandbox:4010/' });
    try {
      expect(sandbox.baseUrl).toBe('http://sandbox:4010');
    } finally {
      await sandbox.close();
    }
  });

  it.each([
    ['not a URL', /publicUrl must be an http or https URL/],
    ['ftp://sandbox:4010', /publicUrl must be http or https, got ftp:/],
    ['http://sandbox:4010/path', /publicUrl must be an origin/],
    ['http://user:pw@sandbox:4010', /publicUrl must be an origin/],
  ])('refuses %s with a TypeError saying what is wrong', (publicUrl, message) => {
    expect(() => createSandbox({ publicUrl })).toThrow(TypeError);
    expect(() => createSandbox({ publicUrl })).toThrow(message);
  });
});
