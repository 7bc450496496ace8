/**
 * What a browser sees when its sign-in (`/auth/signin` → the identity provider →
 * `/auth/callback`) fails: a page in the look of the sign-in pages that says what happened, in
 * words, and links to signing in again, with the status the one error table gives. A browser
 * would show the JSON envelope as raw text. Pure rendering; the routes decide who gets it.
 */
import type { LadingError } from '../core/errors.ts';
import type { Page } from '../identity/oidc/interactions.ts';
import { NOTICE_PAGE_HEADERS, type Notice, renderNoticePage } from '../identity/oidc/pages.ts';
import type { LoginRefusal } from '../identity/oidc/relying-party.ts';
import { STATUS_BY_CODE } from './errors.ts';

type Words = Pick<Notice, 'heading' | 'paragraphs'>;

const START_AGAIN = 'Start again: a sign-in lasts ten minutes and completes once.';

const REFUSALS: Record<LoginRefusal, Words> = {
  'denied': {
    heading: 'Sign-in cancelled',
    paragraphs: ['You chose not to let lading data staging use your account, so you are not signed in.'],
  },
  'no-state': {
    heading: 'This sign-in has expired',
    paragraphs: ['The answer of the identity provider did not say which sign-in it belongs to.', START_AGAIN],
  },
  'unknown-state': {
    heading: 'This sign-in has expired',
    paragraphs: ['It was started too long ago, or it is not one this service started.', START_AGAIN],
  },
  'replayed': {
    heading: 'This sign-in was already used',
    paragraphs: ['Each sign-in completes once; going back to its last page or reloading it cannot repeat it.', START_AGAIN],
  },
  'other-browser': {
    heading: 'This sign-in was started elsewhere',
    paragraphs: ['It was started in another browser (or the cookie it set here is gone, for instance because cookies are blocked). Start again in this browser.'],
  },
  'provider-error': {
    heading: 'The identity provider did not sign you in',
    paragraphs: [],
  },
  'invalid-answer': {
    heading: 'The identity provider\'s answer was refused',
    paragraphs: ['This service could not accept what the identity provider sent back, so you are not signed in. If it happens again, tell the operators of this service.'],
  },
};

function wordsFor(err: LadingError): Words {
  const refusal = err.details.refusal as LoginRefusal | undefined;
  if (err.code === 'UNAUTHENTICATED' && refusal && refusal in REFUSALS) {
    const words = REFUSALS[refusal];
    // NOTE: the provider's own words (its error code and description) say more than ours can.
    return refusal === 'provider-error' ? { ...words, paragraphs: [err.message] } : words;
  }
  switch (err.code) {
    case 'FORBIDDEN':
      return { heading: 'You cannot sign in with this account', paragraphs: [err.message] };
    case 'UNAVAILABLE':
      return { heading: 'The identity provider cannot be reached', paragraphs: ['Signing in needs it; try again in a few minutes.'] };
    case 'BAD_REQUEST':
      return { heading: 'This sign-in link is not valid', paragraphs: [err.message] };
    default: {
      const { status } = STATUS_BY_CODE[err.code];
      return status >= 500
        ? { heading: 'Signing in failed', paragraphs: ['Something went wrong on the side of this service. Try again; if it persists, tell its operators.'] }
        : { heading: 'Signing in failed', paragraphs: [err.message] };
    }
  }
}

/**
 * The page of a failed browser sign-in: what `err` means for the user, a "Sign in again" link to
 * `/auth/signin` (with `next` when the failed sign-in had one), and the status of `err`'s code.
 */
export function signinFailurePage(err: LadingError, next: string | null): Page {
  const { status } = STATUS_BY_CODE[err.code];
  const href = next && next !== '/' ? `/auth/signin?${new URLSearchParams({ next }).toString()}` : '/auth/signin';
  const html = renderNoticePage({
    ...wordsFor(err),
    title: 'Not signed in',
    link: { href, label: 'Sign in again' },
    footer: 'You are not signed in to lading data staging.',
  });
  const headers: Record<string, string> = { ...NOTICE_PAGE_HEADERS };
  // NOTE: a 401 names the scheme that would succeed (RFC 9110 section 15.5.2), as the envelope's does.
  if (status === 401) headers['www-authenticate'] = 'Bearer realm="lading"';
  return { status, html, headers };
}
