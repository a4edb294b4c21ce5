/**
 * The console's reading of a refused admin call (console/src/api.ts): the service's error body gives its code; a
 * 401 in any body (API Gateway's authorizer answers `{"message":"Unauthorized"}` in AWS) is a refused token, which
 * sends the admin back to sign-in; anything else is described by its status.
 */
import { describe, expect, it } from '@jest/globals';
import { TOKEN_INVALID, toApiError } from '../../../console/src/api';

const read = (status: number, text: string) => {
  const error = toApiError(status, text);
  return { status: error.status, code: error.code, message: error.message };
};

describe('a refused admin call', () => {
  it("keeps the service's code and message", () => {
    expect(read(404, '{"error":"Partner not found","code":"PARTNER_NOT_FOUND"}')).toEqual({ status: 404, code: 'PARTNER_NOT_FOUND', message: 'Partner not found' });
    expect(read(401, '{"error":"A valid admin bearer token is required","code":"ADMIN_TOKEN_INVALID"}').code).toBe(TOKEN_INVALID);
  });

  it("reads API Gateway's 401, or any 401 without the service's body, as a refused token", () => {
    expect(read(401, '{"message":"Unauthorized"}').code).toBe(TOKEN_INVALID);
    expect(read(401, '<html>Unauthorized</html>').code).toBe(TOKEN_INVALID);
  });

  it('describes any other foreign answer by its status', () => {
    expect(read(502, '<html>Bad gateway</html>')).toEqual({ status: 502, code: 'HTTP_ERROR', message: 'The service answered 502' });
    expect(read(403, '{"message":"Forbidden"}').code).toBe('HTTP_ERROR');
  });
});
