/**
 * The uploads as the user sees them: a progress bar per file and in total, the rate and the
 * time left, pause, resume and cancel; where each went and when, the checksum and PID of what
 * finished; and the user's open uploads no page is sending (a reload's, another browser's, the
 * CLI's), which go on once the user picks the same files again, or can be discarded.
 */
import { useEffect, useState } from 'preact/hooks';
import { baseName, describeError, parentOf } from './api.ts';
import { ago, duration, humanSize, rate, shortDate } from './format.ts';
import { browseHref, itemHref } from './router.ts';
import { Notice, Progress } from './ui.tsx';
import { type UploadItem, uploads } from './uploads.ts';

/** Re-renders the caller whenever the upload queue changes. */
export function useUploads(): typeof uploads {
  const [, setTick] = useState(0);
  const rendered = uploads.version;
  useEffect(() => {
    const unsubscribe = uploads.subscribe(() => setTick((n) => n + 1));
    // NOTE: the effect runs a frame or more after the render; a change in between (the
    // unfinished uploads found right after signing in) was told to no one, so render again.
    if (uploads.version !== rendered) setTick((n) => n + 1);
    return unsubscribe;
  }, []);
  return uploads;
}

const STATE_TEXT: Record<UploadItem['state'], string> = {
  waiting: 'Waiting', uploading: 'Uploading', paused: 'Paused', done: 'Done', failed: 'Failed', skipped: 'Skipped (exists)', cancelled: 'Cancelled',
};

function ItemRow(props: { item: UploadItem }) {
  const i = props.item;
  const left = i.rate > 0 ? (i.total - i.sent) / i.rate : Number.NaN;
  return (
    <li class={`transfer ${i.state}`}>
      <div class="transfer-head">
        <span class="transfer-name break" title={i.target}>{i.label}</span>
        <span class="transfer-state">{i.state === 'uploading' && i.stalled ? 'Waiting for the server…' : STATE_TEXT[i.state]}</span>
      </div>
      {i.state !== 'skipped' && i.state !== 'cancelled' && <Progress value={i.sent} max={i.total} label={`Upload of ${i.label}`} />}
      <div class="transfer-foot">
        <span>
          {humanSize(i.sent)} of {humanSize(i.total)}
          {i.state === 'uploading' && !i.stalled && i.rate > 0 && ` · ${rate(i.rate)} · ${duration(left)} left`}
          {i.resumedFrom !== null && i.resumedFrom > 0 && ` · resumed at ${humanSize(i.resumedFrom)}`}
          {' · into '}<a href={browseHref(parentOf(i.target))} class="break">{folderName(parentOf(i.target))}</a>
          {i.finishedAt !== null && <> · done <time dateTime={new Date(i.finishedAt).toISOString()}>{shortDate(new Date(i.finishedAt).toISOString())}</time></>}
        </span>
        <span class="transfer-actions">
          {(i.state === 'uploading' || i.state === 'waiting') && <button type="button" class="link" onClick={() => uploads.pause(i)} aria-label={`Pause ${i.label}`}>Pause</button>}
          {(i.state === 'paused' || i.state === 'failed') && <button type="button" class="link" onClick={() => uploads.resume(i)} aria-label={`Resume ${i.label}`}>Resume</button>}
          {(i.state === 'uploading' || i.state === 'waiting' || i.state === 'paused' || i.state === 'failed') && <button type="button" class="link" onClick={() => uploads.cancel(i)} aria-label={`Cancel ${i.label}`}>Cancel</button>}
          {i.state === 'done' && <a href={itemHref(i.target)} aria-label={`Details of ${i.label}`}>Details</a>}
        </span>
      </div>
      {i.error && <p class="transfer-error">{i.error}</p>}
      {i.state === 'done' && (i.checksum || i.pid) && (
        <p class="transfer-result">
          {i.checksum && <>Checksum <code>{i.checksum}</code></>}
          {i.pid && <> · PID <code>{i.pid}</code></>}
        </p>
      )}
    </li>
  );
}

/** The last segment of a folder's path, `/` for the root. */
function folderName(path: string): string {
  return baseName(path) || '/';
}

/** The user's open uploads no page is sending: pick the files again to resume them, or discard them. */
function Unfinished() {
  const manager = useUploads();
  const [said, setSaid] = useState('');
  if (manager.unfinished.length === 0) return said ? <Notice kind="info">{said}</Notice> : null;
  return (
    <div class="notice info unfinished" role="region" aria-labelledby="unfinished-title">
      <h2 id="unfinished-title">Unfinished uploads</h2>
      <p>These uploads stopped before they were done: a page was left, or they were started elsewhere. Choose the same files again to continue where they stopped, or discard them.</p>
      <ul>
        {manager.unfinished.map((u) => (
          <li key={u.key}>
            <span class="break">{u.label}</span>{' '}
            <span class="hint">({humanSize(u.offset ?? 0)}{u.size === null ? '' : ` of ${humanSize(u.size)}`} sent, into <a href={browseHref(parentOf(u.target))}>{folderName(parentOf(u.target))}</a>{u.created ? `, started ${ago(u.created)}` : ''}{u.local ? '' : ', not from this browser'})</span>
            <button type="button" class="link" onClick={() => manager.discard(u).catch((err: unknown) => setSaid(`${u.label} was not discarded: ${describeError(err)}`))} aria-label={`Discard the upload of ${u.label}`}>Discard</button>
          </li>
        ))}
      </ul>
      <label class="button primary file-button">
        Choose the files again
        <input type="file" multiple class="visually-hidden" onChange={(e) => {
          const n = manager.resumeWith([...(e.currentTarget.files ?? [])]);
          setSaid(n > 0 ? `${n} ${n === 1 ? 'upload continues' : 'uploads continue'}.` : 'None of these files belongs to an unfinished upload (same name and size).');
          e.currentTarget.value = '';
        }} />
      </label>
      {said && <p role="status">{said}</p>}
    </div>
  );
}

function Totals() {
  const t = uploads.totals();
  const left = t.rate > 0 ? (t.total - t.sent) / t.rate : Number.NaN;
  return (
    <div class="totals">
      <Progress value={t.sent} max={t.total} label="All uploads" />
      <p>
        {t.done} of {uploads.items.filter((i) => i.state !== 'skipped' && i.state !== 'cancelled').length} done · {humanSize(t.sent)} of {humanSize(t.total)}
        {t.active > 0 && t.rate > 0 && ` · ${rate(t.rate)} · ${duration(left)} left`}
        {t.stalled > 0 && ` · ${t.stalled} waiting for the server`}
        {t.failed > 0 && ` · ${t.failed} failed`}
      </p>
    </div>
  );
}

/** The transfers page. */
export function TransfersPage() {
  const manager = useUploads();
  const items = manager.items;
  return (
    <section class="page" aria-labelledby="page-title">
      <div class="page-head">
        <h1 id="page-title">Transfers</h1>
        {items.length > 0 && (
          <div class="toolbar">
            <button type="button" class="secondary" onClick={() => manager.pauseAll()}>Pause all</button>
            <button type="button" class="secondary" onClick={() => manager.resumeAll()}>Resume all</button>
            <button type="button" class="secondary" onClick={() => manager.clearFinished()}>Clear finished</button>
          </div>
        )}
      </div>
      <Unfinished />
      {items.length === 0 ? <p class="hint">No uploads in this session. Upload files from a folder's page.</p> : (
        <>
          <Totals />
          <ul class="transfers" aria-label="Uploads">{items.map((i) => <ItemRow key={i.id} item={i} />)}</ul>
        </>
      )}
    </section>
  );
}

/** The uploads that count (not skipped or cancelled ones). */
function counted(manager: typeof uploads): UploadItem[] {
  return manager.items.filter((i) => i.state !== 'skipped' && i.state !== 'cancelled');
}

/**
 * Whether uploads of this page are under way: some wait, run or are paused (so that Resume
 * stays in reach). Unfinished uploads no page sends are not: they are listed under Transfers,
 * and the header's chip points there, so that they never hold a panel over the listing.
 */
function underWay(manager: typeof uploads): boolean {
  return manager.items.some((i) => i.state === 'waiting' || i.state === 'uploading' || i.state === 'paused');
}

/**
 * A compact panel of the uploads, over the corner of every page while uploads are under way:
 * totals, the files still to send and the uploads a reload interrupted. Once nothing is under
 * way it goes, and `TransferStatus` says how they ended.
 */
export function TransferPanel() {
  const manager = useUploads();
  // NOTE: folded at first on a phone, where the open list would take half the screen.
  const [open, setOpen] = useState(() => !matchMedia('(max-width: 720px)').matches);
  if (!underWay(manager)) return null;
  const running = counted(manager);
  const t = manager.totals();
  return (
    <aside class="transfer-panel" aria-label="Uploads in progress">
      <div class="panel-head">
        {/* NOTE: after a reload the panel may hold only unfinished uploads: no "0 of 0". */}
        <h2>Uploads <span class="hint">({t.done} of {running.length} done{t.failed ? `, ${t.failed} failed` : ''})</span></h2>
        <button type="button" class="link" aria-expanded={open} onClick={() => setOpen(!open)}>{open ? 'Hide' : 'Show'}</button>
        <a href="#/transfers">All transfers</a>
      </div>
      <Totals />
      {open && (
        <ul class="transfers compact" aria-label="Uploads">
          {running.filter((i) => i.state !== 'done').slice(0, 6).map((i) => <ItemRow key={i.id} item={i} />)}
        </ul>
      )}
    </aside>
  );
}

/**
 * How the uploads ended, once none is under way: a small chip in the page's header (so it
 * covers nothing) linking to the transfers page, which can be dismissed until the next upload.
 * The live region is always there, so the end of the uploads is announced.
 */
export function TransferStatus() {
  const manager = useUploads();
  const [closedAt, setClosedAt] = useState(-1);
  const ended = counted(manager);
  const t = manager.totals();
  const [unfinishedClosed, setUnfinishedClosed] = useState('');
  // NOTE: a dismissed chip comes back once the list of uploads changes (a new upload).
  const shown = ended.length > 0 && !underWay(manager) && closedAt !== manager.items.length;
  const trouble = t.failed > 0;
  const unfinished = manager.unfinished.length;
  const unfinishedKeys = manager.unfinished.map((u) => u.key).join('\n');
  const unfinishedShown = unfinished > 0 && !underWay(manager) && unfinishedClosed !== unfinishedKeys;
  return (
    <div class="status-slot" role="status">
      {shown && (
        <span class={`upload-chip${trouble ? ' trouble' : ''}`}>
          <a href="#/transfers" id="upload-chip-link">
            {t.done} of {ended.length} {ended.length === 1 ? 'upload' : 'uploads'} done{t.failed ? `, ${t.failed} failed` : ''}
          </a>
          <button type="button" class="link" onClick={() => setClosedAt(manager.items.length)} aria-label="Dismiss the uploads summary" title="Dismiss">×</button>
        </span>
      )}
      {unfinishedShown && (
        <span class="upload-chip pending">
          <a href="#/transfers">{unfinished} unfinished {unfinished === 1 ? 'upload' : 'uploads'}</a>
          <button type="button" class="link" onClick={() => setUnfinishedClosed(unfinishedKeys)} aria-label="Dismiss the unfinished uploads note" title="Dismiss">×</button>
        </span>
      )}
    </div>
  );
}
