/**
 * The web app's entry point: a share link's page when the server says the page is one, else
 * the signed-in app (header, navigation, the page the URL's fragment names, and the uploads
 * panel) or, without a session, the sign-in page. Sign-in goes through `/auth/signin`, which
 * sets the session cookie and comes back here.
 */
import './styles.css';
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { forgetShared } from './access.ts';
import { ApiError, api, describeError, parentOf, setCsrfToken, whenSignedOut } from './api.ts';
import { ApiPage } from './api-page.tsx';
import { BrowsePage, SharedPage } from './browse.tsx';
import { ItemPage } from './item.tsx';
import { QuotaUsage } from './quota.tsx';
import { RecentPage, SearchPage, SiteSearch, parseSearch } from './search.tsx';
import { type Route, useRoute } from './router.ts';
import { PublicPage, SharePage } from './share-page.tsx';
import { TransferPanel, TransferStatus, TransfersPage } from './transfers.tsx';
import { TrashPage, UndoToast } from './trash.tsx';
import type { PublicPageData, Session, SharePageData } from './types.ts';
import { Brand, Logo, Notice } from './ui.tsx';
import { uploads } from './uploads.ts';

const RETURN_KEY = 'lading.return-to';

function SignInPage(props: { message?: string }) {
  const signIn = () => {
    // NOTE: the page to come back to is in the fragment, which the server never sees.
    if (location.hash && location.hash !== '#/') sessionStorage.setItem(RETURN_KEY, location.hash);
  };
  useEffect(() => { document.title = 'Sign in · lading'; }, []);
  return (
    <div class="standalone">
      <main class="card">
        <Brand />
        <h1>Sign in</h1>
        <p>Browse, upload, share and publish your research data.</p>
        {props.message && <Notice kind="info">{props.message}</Notice>}
        <div class="actions"><a class="button primary grow" href="/auth/signin?next=%2F" onClick={signIn}>Sign in</a></div>
        <footer class="page-foot">Using a script or curl? See the API at <a href="/api/docs">/api/docs</a>.</footer>
      </main>
    </div>
  );
}

const NAV: { page: Route['page']; href: string; label: string }[] = [
  { page: 'browse', href: '#/browse', label: 'Files' },
  { page: 'shared', href: '#/shared', label: 'Shared with me' },
  { page: 'recent', href: '#/recent', label: 'Recent' },
  { page: 'transfers', href: '#/transfers', label: 'Transfers' },
  { page: 'trash', href: '#/trash', label: 'Trash' },
  { page: 'api', href: '#/api', label: 'API access' },
];

function titleOf(route: Route, session: Session): string {
  switch (route.page) {
    case 'browse': return route.path && route.path !== session.home ? route.path.split('/').at(-1)! : 'My files';
    case 'item': return route.path.split('/').at(-1)!;
    case 'shared': return 'Shared with me';
    case 'search': return 'Search';
    case 'recent': return 'Recent uploads';
    case 'transfers': return 'Transfers';
    case 'trash': return 'Trash';
    case 'api': return 'API access';
  }
}

function SignedIn(props: { session: Session; onSignOut: () => void }) {
  const { session } = props;
  const route = useRoute();
  const [error, setError] = useState('');
  useEffect(() => { document.title = `${titleOf(route, session)} · lading`; }, [route, session]);
  // NOTE: a new page moves focus to its heading, so keyboard and screen reader users start there.
  useEffect(() => {
    const main = document.getElementById('content');
    if (main && document.activeElement !== document.body) main.focus({ preventScroll: true });
  }, [route.page, 'path' in route ? route.path : '', 'query' in route ? route.query : '']);
  const signOut = async () => {
    try {
      const { next } = await api<{ next?: string }>('POST', '/auth/signout');
      // NOTE: with an external provider, `next` is its end-session page, which ends the login
      // there too and comes back to `/`; the embedded provider's login ended with the session.
      if (next && /^https?:\/\//.test(next)) {
        location.assign(next);
        return;
      }
      props.onSignOut();
    } catch (err) {
      setError(describeError(err));
    }
  };
  // NOTE: what lies outside the home was reached from Shared with me (or a link), not from Files.
  const outside = (route.page === 'browse' || route.page === 'item') && route.path !== null
    && route.path !== session.home && !route.path.startsWith(`${session.home}/`);
  const section = route.page === 'item' || route.page === 'browse' ? (outside ? 'shared' : 'browse') : route.page;
  let page;
  switch (route.page) {
    case 'browse': page = <BrowsePage session={session} path={route.path ?? session.home} />; break;
    case 'item': page = <ItemPage session={session} path={route.path} />; break;
    case 'shared': page = <SharedPage session={session} />; break;
    case 'search': page = <SearchPage session={session} query={parseSearch(route.query)} />; break;
    case 'recent': page = <RecentPage session={session} />; break;
    case 'transfers': page = <TransfersPage />; break;
    case 'trash': page = <TrashPage session={session} />; break;
    case 'api': page = <ApiPage session={session} />; break;
  }
  return (
    <>
      <a class="skip" href="#content" onClick={(e) => { e.preventDefault(); document.getElementById('content')?.focus(); }}>Skip to content</a>
      <header class="app-header">
        <a class="brand" href="#/browse"><Logo /><span>lading</span></a>
        <nav aria-label="Main">
          <ul>
            {NAV.map((n) => <li key={n.page}><a href={n.href} aria-current={section === n.page ? 'page' : undefined}>{n.label}</a></li>)}
          </ul>
        </nav>
        <SiteSearch scope={route.page === 'browse' ? route.path ?? session.home : route.page === 'item' ? parentOf(route.path) : ''} home={session.home} />
        <TransferStatus />
        <div class="who">
          <QuotaUsage home={session.home} routeKey={JSON.stringify(route)} />
          <span><span class="hide-phone">Signed in as </span><strong>{session.user}</strong></span>
          <button type="button" class="secondary small" onClick={signOut}>Sign out</button>
        </div>
      </header>
      <main id="content" tabIndex={-1}>
        {error && <Notice kind="error" onClose={() => setError('')}>{error}</Notice>}
        {page}
      </main>
      {route.page !== 'transfers' && <TransferPanel />}
      <UndoToast />
    </>
  );
}

function App() {
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const [message, setMessage] = useState('');
  const [problem, setProblem] = useState('');
  useEffect(() => {
    whenSignedOut(() => {
      setCsrfToken(null);
      forgetShared();
      setSession(null);
      setMessage('Your session has ended. Sign in again to continue.');
    });
    // NOTE: `optional`: signed out is an answer (200), not a refusal the console logs as an error.
    api<Session | { signed_in: false }>('GET', '/auth/session?optional=true').then((s) => {
      if (!('user' in s)) {
        setMessage('');
        setSession(null);
        return;
      }
      setCsrfToken(s.csrf_token);
      setSession(s);
      const back = sessionStorage.getItem(RETURN_KEY);
      if (back) {
        sessionStorage.removeItem(RETURN_KEY);
        location.hash = back;
      }
      void uploads.signedIn(s.user);
    }, (err: unknown) => {
      if (err instanceof ApiError && err.status === 401) {
        setMessage('');
        setSession(null);
      } else {
        setProblem(describeError(err));
      }
    });
  }, []);
  if (problem) {
    return (
      <div class="standalone"><main class="card"><Brand /><h1>lading cannot start</h1><Notice kind="error">{problem}</Notice>
        <div class="actions"><a class="button primary" href="/">Try again</a></div></main></div>
    );
  }
  if (session === undefined) return <p class="loading" role="status">Loading…</p>;
  if (session === null) return <SignInPage message={message} />;
  return <SignedIn session={session} onSignOut={() => { setCsrfToken(null); forgetShared(); setSession(null); setMessage('You signed out.'); }} />;
}

/** What the server put in the page: a share link's, or published data's; null for the app. */
function pageData(): { share?: SharePageData; public?: PublicPageData } | null {
  const block = document.getElementById('lading-data');
  if (!block?.textContent) return null;
  try {
    return JSON.parse(block.textContent) as { share?: SharePageData; public?: PublicPageData };
  } catch {
    return null;
  }
}

const root = document.getElementById('app')!;
const data = pageData();
render(data?.share ? <SharePage data={data.share} /> : data?.public ? <PublicPage data={data.public} /> : <App />, root);
