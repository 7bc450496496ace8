/**
 * What someone without an account sees when they open a share link or published data
 * (`/api/public/…`): a data object's name, size and checksum with a Download button; a
 * collection's listing with a download link per file; a drop box's upload form; or why the link
 * does not work. The server puts what the link shares (or what is published) into the page; the
 * listing and the uploads go to the link itself, as curl would.
 */
import { useEffect, useState } from 'preact/hooks';
import { errorOf } from './api.ts';
import { humanSize, shortDate } from './format.ts';
import type { PublicPageData, RecordFields, SharePageData, SharedMember } from './types.ts';
import { ArchiveLinks, Brand, FileIcon, FolderIcon, Notice, Progress, withQuery } from './ui.tsx';

/**
 * The password of a protected link: posted once to `<link>/password`, which remembers it in a
 * cookie for this link; then the page loads again, open.
 */
function PasswordForm(props: { url: string }) {
  const [password, setPassword] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError('');
    try {
      const res = await fetch(`${props.url}/password`, {
        method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json' }, body: JSON.stringify({ password }), credentials: 'same-origin',
      });
      if (res.ok) {
        location.reload();
        return;
      }
      const err = await errorOf(res);
      setError(res.status === 401 ? 'That is not the password of this link. Try again.' : err.message);
    } catch {
      setError('The server cannot be reached. Try again in a moment.');
    }
    setBusy(false);
  };
  return (
    <form onSubmit={submit} class="password-form">
      <div class="field">
        <label for="share-password">Password</label>
        <input id="share-password" type="password" value={password} onInput={(e) => setPassword(e.currentTarget.value)} required autoFocus autoComplete="current-password" aria-describedby="share-password-hint" />
        <p class="hint" id="share-password-hint">The person who shared this link gave you its password.</p>
      </div>
      {error && <p class="error-text" role="alert">{error}</p>}
      <div class="actions"><button type="submit" class="primary" disabled={busy || !password}>Open</button></div>
    </form>
  );
}

function ErrorView(props: { error: { status: number; title: string; message: string; passwordRequired: boolean; url?: string | null } }) {
  const { error } = props;
  if (error.passwordRequired && error.url) {
    return (
      <>
        <h1>This link needs a password</h1>
        <PasswordForm url={error.url} />
      </>
    );
  }
  const heading = error.passwordRequired ? 'This link needs a password'
    : error.status === 404 ? 'This link does not work'
      : error.status === 410 ? 'This link has expired'
        : error.status === 429 ? 'Too many requests'
          : error.title;
  return (
    <>
      <h1>{heading}</h1>
      <p class="error-text" role="alert">{error.message}</p>
      {error.passwordRequired && <p><a class="button primary" href={location.href}>Enter the password</a></p>}
    </>
  );
}

function download(link: string): string {
  return withQuery(link, 'download=true');
}

function FileView(props: { entry: SharedMember; kind: string }) {
  const e = props.entry;
  return (
    <>
      <h1 class="break">{e.name}</h1>
      <p class="kind">{props.kind}</p>
      <dl class="facts">
        <dt>Size</dt><dd>{humanSize(e.size ?? 0)}{(e.size ?? 0) >= 1024 && <span class="hint"> ({(e.size ?? 0).toLocaleString('en-US')} bytes)</span>}</dd>
        {e.checksum && <><dt>Checksum</dt><dd><code>{e.checksum}</code></dd></>}
        <dt>Modified</dt><dd>{shortDate(e.modified_at)}</dd>
      </dl>
      <div class="actions"><a class="button primary" href={download(e.link)} download={e.name}>Download {e.name}</a></div>
    </>
  );
}

/** The members of a shared collection, as its link lists them. */
async function sharedMembers(link: string): Promise<SharedMember[]> {
  const res = await fetch(link, { headers: { Accept: 'application/json' }, credentials: 'same-origin' });
  if (!res.ok) throw await errorOf(res);
  return ((await res.json()) as { Response: { data: SharedMember[] } }).Response.data;
}

/**
 * The members of a published collection, as `/api/public/<path>/` lists them (every page),
 * with paths relative to the published collection `rootPath`.
 */
async function publicMembers(link: string, rootPath: string): Promise<SharedMember[]> {
  const out: SharedMember[] = [];
  let token: string | null = null;
  do {
    const res = await fetch(`${link}/?max_keys=5000${token ? `&continuation_token=${encodeURIComponent(token)}` : ''}`, { headers: { Accept: 'application/json' } });
    if (!res.ok) throw await errorOf(res);
    const body = (await res.json()) as { Meta: { continuation_token?: string | null }; Response: { data: Record<string, RecordFields>[] } };
    for (const record of body.Response.data) {
      const r = Object.values(record)[0]!;
      const m = r.metadata;
      out.push({
        name: m.name, kind: m.object_type, size: m.size ?? null, checksum: m.checksum, created_at: m.modified ?? '', modified_at: m.modified ?? '',
        path: r.path.slice(rootPath.length), link: r.link,
      });
    }
    token = body.Meta.continuation_token ?? null;
  } while (token);
  return out;
}

function CollectionView(props: { entry: SharedMember; root: string; url: string; kind: string; load: () => Promise<SharedMember[]> }) {
  const [members, setMembers] = useState<SharedMember[] | null>(null);
  const [error, setError] = useState('');
  useEffect(() => {
    props.load().then(setMembers, (err: Error) => setError(err.message));
  }, [props.entry.link]);
  const parts = props.entry.path.split('/').filter(Boolean);
  const title = parts.length === 0 ? props.root : props.entry.name;
  return (
    <>
      {parts.length > 0 && (
        <nav aria-label="Breadcrumb" class="breadcrumbs">
          <ol>
            <li><a href={props.url}>{props.root}</a></li>
            {parts.map((p, i) => (
              <li key={i}>{i === parts.length - 1 ? <span aria-current="page">{p}</span>
                : <a href={`${props.url}/${parts.slice(0, i + 1).map(encodeURIComponent).join('/')}`}>{p}</a>}</li>
            ))}
          </ol>
        </nav>
      )}
      <h1 class="break">{title}</h1>
      <p class="kind">{props.kind}</p>
      <div class="toolbar share-downloads"><ArchiveLinks link={props.entry.link} name={title} /></div>
      {error && <Notice kind="error">{error}</Notice>}
      {!members && !error && <p role="status">Loading…</p>}
      {members && members.length === 0 && <p class="hint">This folder is empty.</p>}
      {members && members.length > 0 && (
        <table class="plain listing">
          <caption class="visually-hidden">Contents of {title}</caption>
          <thead><tr><th scope="col">Name</th><th scope="col" class="col-size">Size</th><th scope="col" class="col-modified">Modified</th></tr></thead>
          <tbody>
            {members.map((m) => (
              <tr key={m.path}>
                <td class="col-name">
                  {m.kind === 'collection'
                    ? <a href={m.link} class="entry-name"><FolderIcon /><span>{m.name}</span><span class="visually-hidden"> (folder)</span></a>
                    : <a href={download(m.link)} class="entry-name" download={m.name}><FileIcon /><span>{m.name}</span><span class="visually-hidden"> (download)</span></a>}
                </td>
                <td class="col-size">{m.size === null ? '' : humanSize(m.size)}</td>
                <td class="col-modified">{shortDate(m.modified_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}

interface Deposit { file: File; sent: number; state: 'waiting' | 'sending' | 'done' | 'failed'; message: string }

/** Sends one file to a drop box with XHR, for its upload progress. */
function put(url: string, file: File, onProgress: (sent: number) => void): Promise<string | null> {
  return new Promise((resolve) => {
    const xhr = new XMLHttpRequest();
    xhr.open('PUT', `${url}/${encodeURIComponent(file.name)}`);
    xhr.setRequestHeader('Content-Type', 'application/octet-stream');
    xhr.setRequestHeader('Accept', 'application/json');
    xhr.upload.onprogress = (e) => onProgress(e.loaded);
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) return resolve(null);
      try {
        const body = JSON.parse(xhr.responseText) as { Response: { errors: Record<string, string>[] } };
        const [title, message] = Object.entries(body.Response.errors[0] ?? {})[0] ?? ['Error', ''];
        resolve(xhr.status === 409 ? `A file named ${file.name} is already there; rename yours and try again.` : `${title}: ${message}`);
      } catch {
        resolve(`The server answered ${xhr.status}.`);
      }
    };
    xhr.onerror = () => resolve('The connection was lost; try again.');
    xhr.send(file);
  });
}

function DropBoxView(props: { url: string }) {
  const [deposits, setDeposits] = useState<Deposit[]>([]);
  const [, setTick] = useState(0);
  const send = async (files: File[]) => {
    const added = files.map((file): Deposit => ({ file, sent: 0, state: 'waiting', message: '' }));
    setDeposits((d) => [...d, ...added]);
    for (const d of added) {
      d.state = 'sending';
      setTick((n) => n + 1);
      const problem = await put(props.url, d.file, (sent) => { d.sent = sent; setTick((n) => n + 1); });
      d.state = problem ? 'failed' : 'done';
      d.message = problem ?? 'Uploaded.';
      if (!problem) d.sent = d.file.size;
      setTick((n) => n + 1);
    }
  };
  return (
    <div onDragOver={(e) => e.preventDefault()} onDrop={(e) => { e.preventDefault(); void send([...(e.dataTransfer?.files ?? [])]); }}>
      <h1>Drop box</h1>
      <p>Files you upload here go to the person who shared this link. You cannot see what is in it, and a file whose name is taken is refused, never overwritten.</p>
      <label class="button primary file-button">
        Choose files to upload
        <input type="file" multiple class="visually-hidden" onChange={(e) => { void send([...(e.currentTarget.files ?? [])]); e.currentTarget.value = ''; }} />
      </label>
      <p class="hint">Or drop files on this page.</p>
      {deposits.length > 0 && (
        <ul class="transfers" aria-label="Uploads">
          {deposits.map((d, i) => (
            <li key={i} class={`transfer ${d.state}`}>
              <div class="transfer-head"><span class="transfer-name break">{d.file.name}</span><span class="transfer-state">{d.state === 'done' ? 'Done' : d.state === 'failed' ? 'Failed' : d.state === 'sending' ? 'Uploading' : 'Waiting'}</span></div>
              <Progress value={d.sent} max={d.file.size} label={`Upload of ${d.file.name}`} />
              {d.message && <p class={d.state === 'failed' ? 'transfer-error' : 'hint'}>{d.message}</p>}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

export function SharePage(props: { data: SharePageData }) {
  const { data } = props;
  let body;
  if ('error' in data) body = <ErrorView error={data.error} />;
  else if (data.kind === 'upload') body = <DropBoxView url={data.url} />;
  else if (data.entry.kind === 'dataobject') body = <FileView entry={data.entry} kind="File shared with you" />;
  else body = <CollectionView entry={data.entry} root={data.root} url={data.url} kind="Folder shared with you" load={() => sharedMembers(data.entry.link)} />;
  return (
    <div class="standalone">
      <main class="card wide">
        <Brand />
        {body}
        <footer class="page-foot">Shared through lading. <a href="/">Sign in</a> if you have an account.</footer>
      </main>
    </div>
  );
}

/** What anyone sees at a published data object or collection (`/api/public/…`) in a browser. */
export function PublicPage(props: { data: PublicPageData }) {
  const { data } = props;
  let body;
  if ('error' in data) {
    body = (
      <>
        <h1>{data.error.status === 404 ? 'Nothing is published here' : data.error.title}</h1>
        <p class="error-text" role="alert">{data.error.status === 404 ? 'This address names nothing published: it may have been unpublished, moved or never existed.' : data.error.message}</p>
      </>
    );
  } else if (data.entry.kind === 'dataobject') {
    body = <FileView entry={data.entry} kind={`File published by ${data.entry.owner}`} />;
  } else {
    body = <CollectionView entry={data.entry} root={data.root} url={data.url} kind={`Folder published by ${data.entry.owner}`} load={() => publicMembers(data.entry.link, data.rootPath)} />;
  }
  return (
    <div class="standalone">
      <main class="card wide">
        <Brand />
        {body}
        <footer class="page-foot">Published through lading: anyone may download it. <a href="/">Sign in</a> if you have an account.</footer>
      </main>
    </div>
  );
}

