/**
 * A request URL as it may be logged: the values of query parameters that carry credentials in
 * OAuth/OIDC flows (the authorization `code`, `state`, tokens) are replaced by `REDACTED`. One pass
 * over the query; a URL without `?` is returned as it is.
 */
const SECRET_PARAMS = new Set(['code', 'state', 'access_token', 'id_token', 'refresh_token', 'token', 'client_secret', 'code_verifier']);

export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  let changed = false;
  const parts = url.slice(q + 1).split('&');
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    const eq = part.indexOf('=');
    const name = eq < 0 ? part : part.slice(0, eq);
    if (eq >= 0 && SECRET_PARAMS.has(name.toLowerCase())) {
      parts[i] = `${name}=REDACTED`;
      changed = true;
    }
  }
  return changed ? `${url.slice(0, q + 1)}${parts.join('&')}` : url;
}
