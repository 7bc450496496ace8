/**
 * API access: the user's API tokens (create one — shown once, with a ready curl line — copy it,
 * revoke it) and the state of their proxy certificate, the credential lading reaches the
 * storage with (when it expires, and a button that renews it through `POST /auth/proxy`), and
 * how to reach the same files over WebDAV (`/dav`) with a token as the password; and
 * the S3 access keys S3 clients sign with (create one — its secret shown once, as the two
 * export lines — list them, revoke one) and the endpoint to use them at, only when the server
 * runs an S3 listener (the session's `s3_endpoint`).
 */
import { useEffect, useState } from 'preact/hooks';
import { ApiError, api, describeError, encodePath } from './api.ts';
import { duration, shortDate } from './format.ts';
import type { ApiToken, CreatedS3Key, CreatedToken, ProxyState, S3Key, Session } from './types.ts';
import { CopyButton, Field, Notice } from './ui.tsx';

function ProxySection() {
  const [state, setState] = useState<ProxyState | null>(null);
  const [error, setError] = useState('');
  const [said, setSaid] = useState('');
  const load = () => api<ProxyState>('GET', '/auth/proxy').then((s) => { setState(s); setError(''); }, (err: unknown) => {
    setState(null);
    setError(err instanceof ApiError && (err.status === 404 || err.status === 405) ? 'This server does not report the proxy certificate\'s state.' : describeError(err));
  });
  useEffect(() => { void load(); }, []);
  const renew = async () => {
    setSaid('');
    try {
      const result = await api<{ Completed: string }>('POST', '/auth/proxy');
      setSaid(result.Completed);
      await load();
    } catch (err) { setError(describeError(err)); }
  };
  return (
    <section class="card" aria-labelledby="proxy-title">
      <h2 id="proxy-title">Proxy certificate</h2>
      <p class="hint">lading reaches the storage with a short-lived X.509 proxy certificate issued for you. When it expires, renew it.</p>
      {error && <Notice kind="error">{error}</Notice>}
      {state && (
        <dl class="facts">
          <dt>State</dt><dd>{state.expired ? <strong class="bad">Expired</strong> : `Valid, ${duration(state.seconds_left)} left`}</dd>
          <dt>Expires at</dt><dd>{shortDate(state.not_after)}</dd>
          <dt>Subject</dt><dd class="break"><code>{state.subject}</code></dd>
          <dt>Issuer</dt><dd class="break"><code>{state.issuer}</code></dd>
        </dl>
      )}
      <div class="actions">
        <button type="button" class="secondary" onClick={renew}>Renew the proxy certificate</button>
      </div>
      {said && <p role="status">{said}</p>}
    </section>
  );
}

function S3KeysSection(props: { endpoint: string; user: string }) {
  const [keys, setKeys] = useState<S3Key[] | null>(null);
  const [error, setError] = useState('');
  const [label, setLabel] = useState('');
  const [created, setCreated] = useState<CreatedS3Key | null>(null);
  const load = () => api<S3Key[]>('GET', '/api/s3/keys').then((k) => { setKeys(k); }, (err: unknown) => {
    setKeys([]);
    setError(err instanceof ApiError && err.status === 404 ? 'This server does not offer S3 keys.' : describeError(err));
  });
  useEffect(() => { void load(); }, []);
  const create = async (e: Event) => {
    e.preventDefault();
    setError('');
    try {
      setCreated(await api<CreatedS3Key>('POST', '/api/s3/keys', { json: label.trim() ? { label: label.trim() } : {} }));
      setLabel('');
      await load();
    } catch (err) { setError(describeError(err)); }
  };
  const revoke = async (k: S3Key) => {
    setError('');
    try {
      await api('DELETE', `/api/s3/keys/${encodeURIComponent(k.access_key_id)}`);
      if (created?.access_key_id === k.access_key_id) setCreated(null);
      await load();
    } catch (err) { setError(describeError(err)); }
  };
  const exports = created ? `export AWS_ACCESS_KEY_ID=${created.access_key_id}\nexport AWS_SECRET_ACCESS_KEY=${created.secret_access_key}` : '';
  const example = `aws --endpoint-url ${props.endpoint} s3 ls s3://${props.user}/`;
  return (
    <section class="card" aria-labelledby="s3-title">
      <h2 id="s3-title">S3 keys</h2>
      <p class="hint">S3 clients (aws, boto3, rclone, s3cmd) sign their requests to this server's S3 listener with a key pair; your bucket is named after you and holds your home.</p>
      <p>Endpoint: <code id="s3-endpoint">{props.endpoint}</code></p>
      <pre class="link-box"><code id="s3-example">{example}</code></pre>
      <CopyButton text={example} label="Copy the aws line" />
      {error && <Notice kind="error" onClose={() => setError('')}>{error}</Notice>}
      {created && (
        <Notice kind="success" onClose={() => setCreated(null)}>
          <p>Your new S3 key — copy the secret now, it is shown only once:</p>
          <pre class="link-box"><code id="s3-exports">{exports}</code></pre>
          <CopyButton text={exports} label="Copy the export lines" />
        </Notice>
      )}
      {keys && keys.length === 0 && <p class="hint">No S3 keys.</p>}
      {keys && keys.length > 0 && (
        <table class="plain">
          <caption class="visually-hidden">Your S3 keys</caption>
          <thead><tr><th scope="col">Access key id</th><th scope="col">Label</th><th scope="col" class="hide-phone">Created</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
          <tbody>
            {keys.map((k) => (
              <tr key={k.access_key_id}>
                <td><code>{k.access_key_id}</code></td>
                <td class="break">{k.label ?? <span class="hint">—</span>}</td>
                <td class="hide-phone">{shortDate(k.created_at)}</td>
                <td><button type="button" class="link" onClick={() => revoke(k)} aria-label={`Revoke the S3 key ${k.access_key_id}`}>Revoke</button></td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <form class="inline-form" onSubmit={create}>
        <Field id="s3-key-label" label="Name of the key (optional)" value={label} onInput={setLabel} hint="What the key is for, e.g. “rclone on the cluster”." />
        <button type="submit" class="primary">Create an S3 key</button>
      </form>
    </section>
  );
}

const DAY = 86_400;

/** The lifetimes offered for a new token: the server's default and common ones up to its maximum. */
function lifetimeChoices(limits: { default: number; max: number }): { seconds: number; text: string }[] {
  const days = (s: number) => (s % DAY === 0 ? `${s / DAY} ${s === DAY ? 'day' : 'days'}` : `${Math.round(s / 3600)} hours`);
  const all = new Set([limits.default, ...[1, 7, 30, 90, 365].map((d) => d * DAY).filter((s) => s <= limits.max), limits.max]);
  return [...all].sort((a, b) => a - b).map((seconds) => ({ seconds, text: days(seconds) }));
}

export function ApiPage(props: { session: Session }) {
  const [tokens, setTokens] = useState<ApiToken[] | null>(null);
  const [error, setError] = useState('');
  const [label, setLabel] = useState('');
  const limits = props.session.token_lifetime;
  const [lifetime, setLifetime] = useState(String(limits?.default ?? ''));
  const [created, setCreated] = useState<CreatedToken | null>(null);
  const load = () => api<ApiToken[]>('GET', '/auth/tokens').then(setTokens, (err: unknown) => { setTokens([]); setError(describeError(err)); });
  useEffect(() => { void load(); }, []);
  const create = async (e: Event) => {
    e.preventDefault();
    setError('');
    try {
      setCreated(await api<CreatedToken>('POST', '/auth/tokens', { json: { label: label.trim(), ...(limits && lifetime ? { lifetime: Number(lifetime) } : {}) } }));
      setLabel('');
      await load();
    } catch (err) { setError(describeError(err)); }
  };
  const revoke = async (t: ApiToken) => {
    setError('');
    try {
      await api('DELETE', `/auth/tokens/${encodeURIComponent(t.id)}`);
      if (created?.id === t.id) setCreated(null);
      await load();
    } catch (err) { setError(describeError(err)); }
  };
  const curl = created ? `curl -H "Authorization: Bearer ${created.token}" ${location.origin}/api/registered${encodePath(props.session.home)}/` : '';
  const davUrl = `${location.origin}/dav${encodePath(props.session.home)}/`;
  return (
    <section class="page" aria-labelledby="page-title">
      <div class="page-head"><h1 id="page-title">API access</h1></div>
      <p class="hint">Scripts, the command-line client and curl use the same API as this app, with a bearer token. The API is described at <a href="/api/docs">/api/docs</a>.</p>
      {error && <Notice kind="error" onClose={() => setError('')}>{error}</Notice>}
      <section class="card" aria-labelledby="tokens-title">
        <h2 id="tokens-title">API tokens</h2>
        {created && (
          <Notice kind="success" onClose={() => setCreated(null)}>
            <p>Your new token — copy it now, it is shown only once{created.expires_at ? ` (valid until ${shortDate(created.expires_at)})` : ''}:</p>
            <p class="link-box"><code id="new-token">{created.token}</code></p>
            <CopyButton text={created.token} label="Copy token" />
            <p>List your home with curl:</p>
            <pre class="link-box"><code id="curl-line">{curl}</code></pre>
            <CopyButton text={curl} label="Copy the curl line" />
            <p>Or mount your home as a drive over WebDAV: address <code>{davUrl}</code>, user name <code>{props.session.user}</code>, and this token as the password.</p>
          </Notice>
        )}
        {tokens && tokens.length === 0 && <p class="hint">No API tokens.</p>}
        {tokens && tokens.length > 0 && (
          <table class="plain">
            <caption class="visually-hidden">Your API tokens</caption>
            <thead><tr><th scope="col">Label</th><th scope="col" class="hide-phone">Created</th><th scope="col">Expires</th><th scope="col" class="hide-phone">Last used</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
            <tbody>
              {tokens.map((t) => (
                <tr key={t.id}>
                  <td class="break">{t.label ?? <span class="hint">(a sign-in)</span>}</td>
                  <td class="hide-phone">{shortDate(t.created_at)}</td>
                  <td>{t.expires_at ? shortDate(t.expires_at) : 'never'}</td>
                  <td class="hide-phone">{t.last_used_at ? shortDate(t.last_used_at) : '—'}</td>
                  <td><button type="button" class="link" onClick={() => revoke(t)} aria-label={`Revoke the token ${t.label || t.id}`}>Revoke</button></td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        <form class="inline-form" onSubmit={create}>
          <Field id="token-label" label="Label" value={label} onInput={setLabel} required hint="What the token is for, e.g. “laptop backup script”." />
          {limits && (
            <div class="field">
              <label for="token-lifetime">Expires after</label>
              <select id="token-lifetime" value={lifetime} onChange={(e) => setLifetime(e.currentTarget.value)}>
                {lifetimeChoices(limits).map((c) => <option key={c.seconds} value={String(c.seconds)}>{c.text}</option>)}
              </select>
            </div>
          )}
          <button type="submit" class="primary" disabled={!label.trim()}>Create a token</button>
        </form>
      </section>
      <section class="card" aria-labelledby="webdav-title">
        <h2 id="webdav-title">WebDAV</h2>
        <p>Your files are also a WebDAV drive, for Finder, Windows Explorer, Cyberduck, davfs2 or rclone:</p>
        <p class="link-box"><code id="dav-url">{davUrl}</code></p>
        <CopyButton text={davUrl} label="Copy the WebDAV address" />
        <p class="hint">Sign in with your user name (<code>{props.session.user}</code>) and an API token made above as the password — not your account password, which an account from an identity provider does not have. rclone can send the token as a bearer token instead (<code>bearer_token</code>). {location.protocol === 'https:' ? '' : 'This server is reached over plain HTTP: Windows refuses to send a password to it, and nothing protects the token on the way; use it through HTTPS.'}</p>
      </section>
      {props.session.s3_endpoint && <S3KeysSection endpoint={props.session.s3_endpoint} user={props.session.user} />}
      <ProxySection />
    </section>
  );
}
