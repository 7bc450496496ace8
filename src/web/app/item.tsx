/**
 * The details of one entity: size, checksum, dates, owner, the PID (copy it, open its landing
 * page), download and rename; its metadata; who has access (grant and revoke, for owners);
 * publishing; and its share links and drop boxes (create, list, revoke). Each section asks the
 * API on its own and says plainly when the user may not do something.
 */
import { useCallback, useEffect, useState } from 'preact/hooks';
import { LEVEL_TEXT, canOwn, canWrite, sharedWithMe, useAccess } from './access.ts';
import { ApiError, api, baseName, describeError, encodePath, nameTaken, parentOf, registeredUrl } from './api.ts';
import { humanSize, shortDate } from './format.ts';
import { browseHref, itemHref } from './router.ts';
import type { AclList, Avu, CreatedShare, Entry, Publication, RecordFields, Session, ShareLink } from './types.ts';
import { entryOf } from './types.ts';
import { type Moved, type Transfer, MoveCopyDialog, MovedNotice } from './move-copy.tsx';
import { moveToTrash } from './trash.tsx';
import { ArchiveLinks, Breadcrumbs, CopyButton, Dialog, Field, NameField, Notice, homeUserOf, nameError, whereName } from './ui.tsx';

/** The entity at `path`, with its details. */
async function statEntry(path: string): Promise<Entry> {
  if (path.split('/').filter(Boolean).length <= 1) {
    return { name: baseName(path) || '/', path, kind: 'collection', size: null, owner: null, modified: null, checksum: null, pid: null, access: null, marks: null };
  }
  const parentRecords = await api<Record<string, RecordFields>[]>('GET', `${registeredUrl(path)}`);
  const own = parentRecords.map(entryOf);
  // NOTE: a data object answers its one record; a collection answers its children, so its own
  // record comes from its parent's listing.
  if (own.length === 1 && own[0]!.path === path) return own[0]!;
  const siblings = await api<Record<string, RecordFields>[]>('GET', `${registeredUrl(parentOf(path))}/`).catch(() => []);
  // NOTE: the parent of a collection shared with the user is not theirs to list; "shared with
  // me" has its record.
  const found = siblings.map(entryOf).find((e) => e.path === path)
    ?? (await sharedWithMe().catch(() => null))?.entries.find((e) => e.path === path);
  return found ?? { name: baseName(path), path, kind: 'collection', size: null, owner: null, modified: null, checksum: null, pid: null, access: null, marks: null };
}

function useLoad<T>(load: () => Promise<T>, deps: unknown[]): { value: T | null; error: ApiError | Error | null; reload: () => void } {
  const [value, setValue] = useState<T | null>(null);
  const [error, setError] = useState<ApiError | Error | null>(null);
  const [count, setCount] = useState(0);
  useEffect(() => {
    let live = true;
    setError(null);
    load().then((v) => { if (live) setValue(v); }, (err: Error) => { if (live) { setValue(null); setError(err); } });
    return () => { live = false; };
  }, [...deps, count]);
  return { value, error, reload: useCallback(() => setCount((n) => n + 1), []) };
}

const forbidden = (err: unknown) => err instanceof ApiError && err.status === 403;

function RenameDialog(props: { entry: Entry; onClose: () => void }) {
  const [name, setName] = useState(props.entry.name);
  const [error, setError] = useState('');
  const submit = async (e: Event) => {
    e.preventDefault();
    if (nameError(name)) return;
    try {
      await api('PATCH', registeredUrl(props.entry.path), { json: { newname: name.trim() } });
      const parent = parentOf(props.entry.path);
      location.hash = itemHref(parent === '/' ? `/${name.trim()}` : `${parent}/${name.trim()}`);
      props.onClose();
    } catch (err) {
      setError(err instanceof ApiError && err.status === 409 ? nameTaken(name.trim()) : describeError(err));
    }
  };
  return (
    <Dialog title={`Rename ${props.entry.kind === 'collection' ? 'folder' : 'file'}`} onClose={props.onClose}>
      <form onSubmit={submit}>
        {error && <Notice kind="error">{error}</Notice>}
        <NameField id="rename" label="New name" value={name} onInput={setName} autoFocus />
        <div class="actions">
          <button type="submit" class="primary" disabled={!name.trim() || name.trim() === props.entry.name || nameError(name) !== ''}>Rename</button>
          <button type="button" class="secondary" onClick={props.onClose}>Cancel</button>
        </div>
      </form>
    </Dialog>
  );
}

/** The entity's metadata; `editable` when the user may change it (write access). */
function MetadataSection(props: { path: string; editable: boolean }) {
  const { value, error, reload } = useLoad(() => api<Avu[]>('GET', `/api/metadata${encodePath(props.path)}`), [props.path]);
  const [attribute, setAttribute] = useState('');
  const [val, setVal] = useState('');
  const [unit, setUnit] = useState('');
  const [problem, setProblem] = useState('');
  const add = async (e: Event) => {
    e.preventDefault();
    setProblem('');
    try {
      await api('POST', `/api/metadata${encodePath(props.path)}`, { json: { attribute, value: val, ...(unit ? { unit } : {}) } });
      setAttribute(''); setVal(''); setUnit('');
      reload();
    } catch (err) { setProblem(describeError(err)); }
  };
  const remove = async (avu: Avu) => {
    setProblem('');
    try {
      await api('DELETE', `/api/metadata${encodePath(props.path)}?attribute=${encodeURIComponent(avu.attribute)}&value=${encodeURIComponent(avu.value)}`);
      reload();
    } catch (err) { setProblem(describeError(err)); }
  };
  return (
    <section class="card" aria-labelledby="metadata-title">
      <h2 id="metadata-title">Metadata</h2>
      {error && <Notice kind="error">{describeError(error)}</Notice>}
      {problem && <Notice kind="error" onClose={() => setProblem('')}>{problem}</Notice>}
      {value && value.length === 0 && <p class="hint">No metadata yet.</p>}
      {value && value.length > 0 && (
        <table class="plain meta">
          <caption class="visually-hidden">Metadata</caption>
          <thead><tr><th scope="col">Attribute</th><th scope="col">Value</th><th scope="col">Unit</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
          <tbody>
            {value.map((avu) => (
              <tr key={`${avu.attribute}\u0000${avu.value}\u0000${avu.unit ?? ''}`}>
                <td class="break meta-attribute">{avu.attribute}</td><td class="break meta-value">{avu.value}</td><td class="meta-unit">{avu.unit ?? ''}</td>
                <td>{/^(PID|EUDAT\/)/i.test(avu.attribute) ? <span class="hint">set by the rules</span>
                  : props.editable && <button type="button" class="link" onClick={() => remove(avu)} aria-label={`Remove ${avu.attribute}`}>Remove</button>}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {props.editable && <form class="inline-form" onSubmit={add}>
        <Field id="avu-attribute" label="Attribute" value={attribute} onInput={setAttribute} required />
        <Field id="avu-value" label="Value" value={val} onInput={setVal} required />
        <Field id="avu-unit" label="Unit (optional)" value={unit} onInput={setUnit} />
        <button type="submit" class="secondary" disabled={!attribute || !val}>Add</button>
      </form>}
    </section>
  );
}

function AccessSection(props: { path: string; home: string }) {
  const { value, error, reload } = useLoad(() => api<AclList>('GET', `/api/acl${encodePath(props.path)}`), [props.path]);
  const [principal, setPrincipal] = useState('');
  const [level, setLevel] = useState<'read' | 'write' | 'own'>('read');
  const [problem, setProblem] = useState('');
  const grant = async (e: Event) => {
    e.preventDefault();
    setProblem('');
    try {
      await api('PUT', `/api/acl${encodePath(props.path)}`, { json: { principal: principal.trim(), level } });
      setPrincipal('');
      reload();
    } catch (err) { setProblem(describeError(err)); }
  };
  const revoke = async (who: string) => {
    setProblem('');
    try {
      await api('DELETE', `/api/acl${encodePath(props.path)}?principal=${encodeURIComponent(who)}`);
      reload();
    } catch (err) { setProblem(describeError(err)); }
  };
  return (
    <section class="card" aria-labelledby="access-title">
      <h2 id="access-title">Who has access</h2>
      {error && (forbidden(error) ? <p class="hint">Only the owners of this see and change who has access.</p> : <Notice kind="error">{describeError(error)}</Notice>)}
      {problem && <Notice kind="error" onClose={() => setProblem('')}>{problem}</Notice>}
      {value && (
        <>
          <ul class="access">
            {value.entries.map((e) => (
              <li key={`own-${e.principal}`}>
                <span><strong>{e.principal}</strong> can {e.level === 'own' ? 'own' : e.level}</span>
                <button type="button" class="link" onClick={() => revoke(e.principal)} aria-label={`Revoke access of ${e.principal}`}>Revoke</button>
              </li>
            ))}
            {value.inherited.map((e) => (
              <li key={`inh-${e.principal}-${e.from}`}>
                <span><strong>{e.principal}</strong> can {e.level}, <span class="hint">from <a href={itemHref(e.from ?? '/')}>{whereName(e.from ?? '/', props.home)}</a></span></span>
              </li>
            ))}
          </ul>
          <form class="inline-form" onSubmit={grant}>
            <Field id="acl-principal" label="User or group (or public)" value={principal} onInput={setPrincipal} required />
            <div class="field">
              <label for="acl-level">Access</label>
              <select id="acl-level" value={level} onChange={(e) => setLevel(e.currentTarget.value as 'read' | 'write' | 'own')}>
                <option value="read">read</option>
                <option value="write">write</option>
                <option value="own">own</option>
              </select>
            </div>
            <button type="submit" class="secondary" disabled={!principal.trim()}>Grant</button>
          </form>
        </>
      )}
    </section>
  );
}

function PublishSection(props: { path: string; collection: boolean; name: string }) {
  const { value, error, reload } = useLoad(() => api<Publication>('GET', `/api/publish${encodePath(props.path)}`), [props.path]);
  const [problem, setProblem] = useState('');
  const [confirming, setConfirming] = useState(false);
  const change = async (publish: boolean) => {
    setProblem('');
    setConfirming(false);
    try {
      await api(publish ? 'PUT' : 'DELETE', `/api/publish${encodePath(props.path)}`);
      reload();
    } catch (err) { setProblem(describeError(err)); }
  };
  return (
    <section class="card" aria-labelledby="publish-title">
      <h2 id="publish-title">Publishing</h2>
      {error && <Notice kind="error">{describeError(error)}</Notice>}
      {problem && <Notice kind="error" onClose={() => setProblem('')}>{problem}</Notice>}
      {value && (value.published ? (
        <>
          <p>Published{value.via !== value.path ? <> through <a href={itemHref(value.via ?? '/')}>{value.via}</a></> : ''}{value.published_at ? ` on ${shortDate(value.published_at)}` : ''}{value.published_by ? ` by ${value.published_by}` : ''}: anyone can read it without an account.</p>
          {value.public_url && <p class="break"><a href={value.public_url}>{value.public_url}</a></p>}
          {value.public_url && props.collection && <p class="toolbar"><ArchiveLinks link={value.public_url} name={props.name} class="button small secondary" /></p>}
          {value.via === value.path && <button type="button" class="secondary" onClick={() => change(false)}>Unpublish</button>}
        </>
      ) : (
        <>
          <p>Not published: only users with access can read it.</p>
          <button type="button" class="secondary" onClick={() => setConfirming(true)}>Publish</button>
        </>
      ))}
      {confirming && (
        // NOTE: publishing cannot be taken back from whoever read or copied it meanwhile: the user confirms first.
        <Dialog title={`Publish ${props.name}?`} onClose={() => setConfirming(false)} describedBy="publish-confirm-text">
          <p id="publish-confirm-text">
            Anyone on the internet can then read and download <strong class="break">{props.name}</strong>{props.collection ? ' and everything in it' : ''}, without an account, until you unpublish it.
          </p>
          <div class="actions">
            <button type="button" class="primary" onClick={() => void change(true)}>Publish for everyone</button>
            <button type="button" class="secondary" onClick={() => setConfirming(false)}>Cancel</button>
          </div>
        </Dialog>
      )}
    </section>
  );
}

/** What the days of an expiry field give the API: `expires_in` seconds, or null for no expiry (an empty field). */
function secondsOf(days: string): number | null {
  return days.trim() ? Math.max(1, Math.round(Number(days) * 86400)) : null;
}

/** Days from now until `at`, rounded up to a tenth, as an expiry field shows them; '' for none. */
function daysUntil(at: string | null): string {
  if (!at) return '';
  const days = (Date.parse(at) - Date.now()) / 86400_000;
  return days <= 0 ? '' : String(Math.ceil(days * 10) / 10);
}

/** How a link is named to people and to screen readers. */
function linkName(l: ShareLink): string {
  return `the ${l.kind === 'upload' ? 'drop box' : 'read link'} created ${shortDate(l.created_at)}`;
}

/**
 * Changes a link's expiry and use limit (the link itself stays the same, so whoever has it
 * keeps it). Uses taken so far count against the new limit.
 */
function EditShareDialog(props: { link: ShareLink; onClose: (changed: boolean) => void }) {
  const { link } = props;
  const [days, setDays] = useState(daysUntil(link.expires_at));
  const [maxUses, setMaxUses] = useState(link.max_uses === null ? '' : String(link.max_uses));
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const save = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError('');
    try {
      const seconds = secondsOf(days);
      await api('PATCH', `/api/shares/${encodeURIComponent(link.id)}`, {
        json: { ...(seconds === null ? { expires_at: null } : { expires_in: seconds }), max_uses: maxUses.trim() ? Number(maxUses) : null },
      });
      props.onClose(true);
    } catch (err) {
      setError(describeError(err));
      setBusy(false);
    }
  };
  return (
    <Dialog title={`Change ${link.kind === 'upload' ? 'drop box' : 'read link'}`} onClose={() => props.onClose(false)} describedBy="edit-share-text">
      <form onSubmit={save}>
        <p id="edit-share-text" class="hint">Whoever has the link keeps it; it works under these limits from now on. Used {link.uses} {link.uses === 1 ? 'time' : 'times'} so far.</p>
        {error && <Notice kind="error">{error}</Notice>}
        <Field id="edit-share-days" label="Expires after (days from now)" value={days} onInput={setDays} type="number" min="0" step="any" hint="Empty: never." />
        <Field id="edit-share-uses" label="Uses in all" value={maxUses} onInput={setMaxUses} type="number" min="1" hint={`Empty: no limit. Uses so far count: ${link.uses}.`} />
        <div class="actions">
          <button type="submit" class="primary" disabled={busy}>Save</button>
          <button type="button" class="secondary" onClick={() => props.onClose(false)}>Cancel</button>
        </div>
      </form>
    </Dialog>
  );
}

function SharesSection(props: { entry: Entry }) {
  const path = props.entry.path;
  const { value, error, reload } = useLoad(() => api<ShareLink[]>('GET', `/api/shares?path=${encodeURIComponent(path)}`), [path]);
  const [kind, setKind] = useState<'read' | 'upload'>('read');
  const [days, setDays] = useState('7');
  const [maxUses, setMaxUses] = useState('');
  const [password, setPassword] = useState('');
  const [created, setCreated] = useState<{ share: CreatedShare; body: Record<string, unknown> } | null>(null);
  const [editing, setEditing] = useState<ShareLink | null>(null);
  const [problem, setProblem] = useState('');
  const send = async (body: Record<string, unknown>) => {
    setProblem('');
    try {
      setCreated({ share: await api<CreatedShare>('POST', '/api/shares', { json: body }), body });
      setPassword('');
      reload();
    } catch (err) { setProblem(describeError(err)); }
  };
  const create = async (e: Event) => {
    e.preventDefault();
    const body: Record<string, unknown> = { path, kind };
    const seconds = secondsOf(days);
    if (seconds !== null) body.expires_in = seconds;
    if (maxUses.trim()) body.max_uses = Number(maxUses);
    if (password) body.password = password;
    await send(body);
  };
  const revoke = async (link: ShareLink) => {
    setProblem('');
    try {
      await api('DELETE', `/api/shares/${encodeURIComponent(link.id)}`);
      if (created?.share.id === link.id) setCreated(null);
      reload();
    } catch (err) { setProblem(describeError(err)); }
  };
  const what = (k: string) => (k === 'upload' ? 'drop box' : 'share link');
  return (
    <section class="card" aria-labelledby="shares-title">
      <h2 id="shares-title">Share links</h2>
      {error && (forbidden(error) ? <p class="hint">Only the owners of this create and see its share links.</p> : <Notice kind="error">{describeError(error)}</Notice>)}
      {problem && <Notice kind="error" onClose={() => setProblem('')}>{problem}</Notice>}
      {created && (
        <Notice kind="success" onClose={() => setCreated(null)}>
          <p><strong>New {what(created.share.kind)}.</strong> Copy it now: it is shown only this once. lading keeps only a fingerprint of it, so nobody can show it again — if it gets lost, revoke it and create another.</p>
          <p class="link-box"><code id="new-link">{created.share.url}</code></p>
          <div class="toolbar">
            <CopyButton text={created.share.url} label="Copy link" />
            {/* NOTE: another link with the same settings (and password), for when this one was not copied in time. */}
            <button type="button" class="secondary small" onClick={() => void send(created.body)}>Create another</button>
          </div>
        </Notice>
      )}
      {value && (
        <>
          {value.length === 0 ? <p class="hint">No links yet.</p> : (
            <ul class="links">
              {value.map((l) => (
                <li key={l.id}>
                  <span>
                    <strong>{l.kind === 'upload' ? 'Drop box' : 'Read link'}</strong> · {l.state}
                    {l.expires_at ? ` · expires ${shortDate(l.expires_at)}` : ' · no expiry'}
                    {` · ${l.uses} ${l.uses === 1 ? 'use' : 'uses'}${l.max_uses !== null ? ` of ${l.max_uses}` : ''}`}
                    {l.password ? ' · password' : ''}
                    <span class="hint"> · created {shortDate(l.created_at)} by {l.creator}</span>
                  </span>
                  <span class="link-actions">
                    <button type="button" class="link" onClick={() => setEditing(l)} aria-label={`Change ${linkName(l)}`}>Change</button>
                    <button type="button" class="link" onClick={() => revoke(l)} aria-label={`Revoke ${linkName(l)}`}>Revoke</button>
                  </span>
                </li>
              ))}
            </ul>
          )}
          <p class="hint">A link is shown once, when it is made; afterwards its expiry and uses can be changed, and it can be revoked.</p>
          <form class="inline-form" onSubmit={create}>
            <div class="field share-kind">
              <label for="share-kind">Kind</label>
              <select id="share-kind" value={kind} onChange={(e) => setKind(e.currentTarget.value as 'read' | 'upload')}>
                <option value="read">Read link (download{props.entry.kind === 'collection' ? ' and list' : ''})</option>
                {props.entry.kind === 'collection' && <option value="upload">Drop box (others upload into it)</option>}
              </select>
            </div>
            <Field id="share-days" label="Expires after (days)" value={days} onInput={setDays} type="number" min="0" step="any" hint="Empty: never." />
            <Field id="share-uses" label="Uses (optional)" value={maxUses} onInput={setMaxUses} type="number" min="1" />
            <Field id="share-password" label="Password (optional)" value={password} onInput={setPassword} type="password" autoComplete="new-password" />
            <button type="submit" class="primary">Create link</button>
          </form>
        </>
      )}
      {editing && <EditShareDialog link={editing} onClose={(changed) => { setEditing(null); if (changed) reload(); }} />}
    </section>
  );
}

export function ItemPage(props: { session: Session; path: string }) {
  const { value: entry, error, reload } = useLoad(() => statEntry(props.path), [props.path]);
  const access = useAccess(props.session, props.path);
  const [renaming, setRenaming] = useState(false);
  const [transfer, setTransfer] = useState<Transfer | null>(null);
  // NOTE: kept with the path it belongs to: after a move the page shows the new path and says so there.
  const [moved, setMoved] = useState<{ at: string; moved: Moved } | null>(null);
  const [trashError, setTrashError] = useState('');
  useEffect(() => { reload(); }, [props.path]);
  // NOTE: people's words first; the API's name follows, for whoever scripts against it.
  const kind = entry?.kind === 'collection' ? 'Folder' : 'File';
  const apiKind = entry?.kind === 'collection' ? 'a collection' : 'a data object';
  const level = access?.level ?? null;
  const shared = access?.sharedRoot ?? null;
  // NOTE: the zone's top collections and the homes are never trashed (the API refuses them).
  const trashable = (path: string) => path !== props.session.home && parentOf(parentOf(path)) !== '/' && parentOf(path) !== parentOf(props.session.home);
  const trash = async (path: string) => {
    setTrashError('');
    try {
      await moveToTrash(path);
      location.hash = browseHref(parentOf(path));
    } catch (err) {
      setTrashError(describeError(err));
    }
  };
  return (
    <section class="page item" aria-labelledby="page-title">
      <Breadcrumbs path={props.path} href={browseHref} home={props.session.home} shared={shared?.path} sharedBy={shared ? homeUserOf(shared.path) : null} />
      {error && <Notice kind="error">{describeError(error)}</Notice>}
      {(!entry || !access) && !error && <p class="loading" role="status">Loading…</p>}
      {entry && access && (
        <>
          <div class="page-head">
            <div>
              <h1 id="page-title" class="break">{entry.name}</h1>
              <p class="kind">{kind} <span class="api-term">({apiKind} in the API)</span></p>
            </div>
            <div class="toolbar">
              {entry.kind === 'dataobject'
                ? <a class="button primary" href={`${registeredUrl(entry.path)}?download=true`} download={entry.name}>Download</a>
                : <a class="button primary" href={browseHref(entry.path)}>Open</a>}
              {/* NOTE: a rename needs write access to the parent too, which a shared entity's own parent is not. */}
              {canWrite(level) && shared?.path !== entry.path && <>
                <button type="button" class="secondary" onClick={() => setRenaming(true)}>Rename</button>
                <button type="button" class="secondary" onClick={() => setTransfer('move')}>Move to…</button>
              </>}
              <button type="button" class="secondary" onClick={() => setTransfer('copy')}>Copy to…</button>
              {entry.kind === 'collection' && <ArchiveLinks link={registeredUrl(entry.path)} name={entry.name} />}
              {canOwn(level) && trashable(entry.path) && <button type="button" class="secondary danger" onClick={() => void trash(entry.path)}>Move to trash</button>}
            </div>
          </div>
          {trashError && <Notice kind="error" onClose={() => setTrashError('')}>{trashError}</Notice>}
          {moved && moved.at === entry.path && <MovedNotice moved={moved.moved} home={props.session.home} itemLink={itemHref} onClose={() => setMoved(null)} />}
          <section class="card" aria-labelledby="facts-title">
            <h2 id="facts-title" class="visually-hidden">Facts</h2>
            <dl class="facts">
              {entry.kind === 'dataobject' && entry.size !== null && <><dt>Size</dt><dd>{humanSize(entry.size)}{entry.size >= 1024 && <span class="hint"> ({entry.size.toLocaleString('en-US')} bytes)</span>}</dd></>}
              {entry.checksum && <><dt>Checksum</dt><dd><code id="checksum">{entry.checksum}</code></dd></>}
              <dt>PID</dt>
              <dd>
                {entry.pid ? (
                  <span class="pid">
                    <code id="pid">{entry.pid}</code>
                    <CopyButton text={entry.pid} label="Copy PID" />
                    <a href={`/api/pids/${entry.pid.split('/').map(encodeURIComponent).join('/')}`}>Landing page</a>
                  </span>
                ) : <span class="hint">None (assigned by the backend's rules, when they apply)</span>}
              </dd>
              {entry.modified && <><dt>Modified</dt><dd>{shortDate(entry.modified)}</dd></>}
              {entry.owner && <><dt>Owner</dt><dd>{entry.owner}</dd></>}
              <dt>Path in the API</dt><dd class="break"><code>{entry.path}</code></dd>
              {shared && <><dt>Your access</dt><dd id="your-access">{LEVEL_TEXT[shared.access ?? 'read']}{shared.path !== entry.path && <span class="hint">, from <a href={itemHref(shared.path)}>{shared.name}</a></span>}</dd></>}
            </dl>
          </section>
          {canOwn(level) ? (
            <>
              <SharesSection entry={entry} />
              <AccessSection path={entry.path} home={props.session.home} />
              <PublishSection path={entry.path} collection={entry.kind === 'collection'} name={entry.name} />
            </>
          ) : <p class="hint">Only the owners of this {entry.kind === 'collection' ? 'folder' : 'file'} create share links for it, see and change who has access, and publish it.</p>}
          <MetadataSection path={entry.path} editable={canWrite(level)} />
          {renaming && <RenameDialog entry={entry} onClose={() => setRenaming(false)} />}
          {transfer && (
            <MoveCopyDialog
              entry={entry} mode={transfer} home={props.session.home}
              // NOTE: what is shared with the user sits where they may not list: they start at their home.
              start={shared?.path === entry.path ? props.session.home : parentOf(entry.path)}
              onClose={() => setTransfer(null)}
              onDone={(done) => {
                setTransfer(null);
                setMoved({ at: done.mode === 'move' ? done.target : entry.path, moved: done });
                if (done.mode === 'move') location.hash = itemHref(done.target);
              }}
            />
          )}
        </>
      )}
    </section>
  );
}
