/**
 * The pages of the embedded provider's device authorization flow (RFC 8628), in the look of the
 * sign-in pages: where the user types the code a command line shows (`/oidc/device`), where
 * they confirm it, and the page saying the command line is now signed in. Plugged into
 * `oidc-provider`'s `features.deviceFlow`; its forms' hidden CSRF value (`xsrf`) is kept.
 */
import type { KoaContextWithOIDC } from 'oidc-provider';
import { esc, pageLayout as layout } from './pages.ts';
import { PAGE_HEADERS } from './interactions.ts';

/** The `action` and `xsrf` of a form `oidc-provider` generated, so the page can render its own. */
export function formParts(form: string): { action: string; xsrf: string } {
  const action = /\saction="([^"]*)"/.exec(form)?.[1] ?? '';
  const xsrf = /name="xsrf"\s+value="([^"]*)"/.exec(form)?.[1] ?? '';
  // NOTE: the values come HTML-escaped (the action holds no escapable character, the secret is base64url).
  return { action: action.replace(/&amp;/g, '&'), xsrf };
}

/** The page asking for the code; `error` is shown above the form. */
export function renderDeviceCodePage(input: { action: string; xsrf: string; error?: string }): string {
  return layout('Connect a device', `
<h1>Connect a device</h1>
<p>Enter the code that the lading command line (or another program) shows you.</p>
${input.error ? `<div class="error" role="alert" id="code-error">${esc(input.error)}</div>` : ''}
<form method="post" action="${esc(input.action)}"${input.error ? ' aria-describedby="code-error"' : ''}>
<input type="hidden" name="xsrf" value="${esc(input.xsrf)}">
<label for="user_code">Code</label>
<input type="text" id="user_code" name="user_code" autocomplete="off" autocapitalize="characters" spellcheck="false" required autofocus>
<div class="actions"><button type="submit" class="primary">Continue</button></div>
</form>
<footer>Only enter a code that you asked for yourself, on a device you use.</footer>`);
}

/** The page confirming the code before signing in. */
export function renderDeviceConfirmPage(input: { action: string; xsrf: string; userCode: string; clientName: string }): string {
  return layout('Confirm the device', `
<h1>Is this your code?</h1>
<p><strong>${esc(input.clientName)}</strong> asks to sign in with the code <strong class="who" id="user-code">${esc(input.userCode)}</strong>.</p>
<p>Continue only if your device shows this code and you started the sign-in yourself.</p>
<form method="post" action="${esc(input.action)}">
<input type="hidden" name="xsrf" value="${esc(input.xsrf)}">
<input type="hidden" name="user_code" value="${esc(input.userCode)}">
<div class="actions">
<button type="submit" class="primary" name="confirm" value="yes">Continue</button>
<button type="submit" class="secondary" name="abort" value="yes">Cancel</button>
</div>
</form>
<footer>Cancel if you do not recognise the request: nothing is shared.</footer>`);
}

/** The page after a successful sign-in. */
export function renderDeviceDonePage(clientName: string): string {
  return layout('Device connected', `
<h1>Device connected</h1>
<p><strong>${esc(clientName)}</strong> is now signed in. You may close this window and go back to it.</p>`);
}

const MESSAGES: Record<string, string> = {
  NoCodeError: 'Enter the code your device shows.',
  NotFoundError: 'That code is not right. Check it and try again.',
  ExpiredError: 'That code has expired. Start the sign-in again on your device.',
  AlreadyUsedError: 'That code has been used already. Start the sign-in again on your device.',
  AbortedError: 'The sign-in was cancelled.',
};

function send(ctx: KoaContextWithOIDC, html: string): void {
  for (const [name, value] of Object.entries(PAGE_HEADERS)) ctx.set(name, value);
  ctx.type = 'html';
  ctx.body = html;
}

/** The `features.deviceFlow` page hooks of the embedded provider. */
export const deviceFlowPages = {
  userCodeInputSource: (ctx: KoaContextWithOIDC, form: string, _out?: unknown, err?: Error): void => {
    const known = err ? MESSAGES[err.name] : undefined;
    const error = err ? (known ?? 'The code could not be checked. Try again.') : undefined;
    send(ctx, renderDeviceCodePage({ ...formParts(form), ...(error ? { error } : {}) }));
  },
  userCodeConfirmSource: (ctx: KoaContextWithOIDC, form: string, client: { clientName?: string; clientId: string }, _info: unknown, userCode: string): void => {
    send(ctx, renderDeviceConfirmPage({ ...formParts(form), userCode, clientName: client.clientName ?? client.clientId }));
  },
  successSource: (ctx: KoaContextWithOIDC): void => {
    const client = ctx.oidc.client;
    send(ctx, renderDeviceDonePage(client?.clientName ?? client?.clientId ?? 'The program'));
  },
};
