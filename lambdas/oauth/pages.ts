import type { MemoryScope } from '../identity/principal';

/**
 * The front's HTML: the local sign-in, the consent and the error page. Everything that comes from
 * a request or a client registration is escaped; a client's name is shown as unverified, next to
 * the host the browser will be sent back to, which is what the user can actually judge.
 */

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);
}

const STYLE = `body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;color:#1b1b1b;line-height:1.45}
h1{font-size:1.4rem}.box{border:1px solid #ccc;border-radius:8px;padding:1rem 1.25rem;margin:1rem 0}
.warn{background:#fff4d6;border-color:#e0b84a}.err{background:#fde8e8;border-color:#d66}
label{display:block;margin:.4rem 0}input[type=text]{width:100%;padding:.45rem;box-sizing:border-box}
button{padding:.5rem 1.1rem;margin-right:.5rem;font-size:1rem}code{word-break:break-all}small{color:#555}`;

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body>${body}</body></html>`;
}

export function errorPage(title: string, message: string): string {
  return page(
    title,
    `<h1>${escapeHtml(title)}</h1><div class="box err"><p>${escapeHtml(message)}</p></div><p><small>You can close this window and start again from your application.</small></p>`,
  );
}

export function localSignInPage(opts: { tx: string; clientLabel: string; error?: string; favoritesOnly?: boolean }): string {
  return page(
    'Sign in (local development)',
    `<h1>Sign in</h1>
<div class="box warn"><strong>Local development only.</strong> This sign-in page exists only in the local stack: it accepts any user name and asks for no password. A deployed stack signs users in with Amazon Cognito instead.</div>
<p><strong>${escapeHtml(opts.clientLabel)}</strong> wants ${opts.favoritesOnly ? 'you to sign in to keep your favorites' : 'to use your memories'}.</p>
${opts.error ? `<div class="box err">${escapeHtml(opts.error)}</div>` : ''}
<form method="post" action="/oauth/login">
<input type="hidden" name="tx" value="${escapeHtml(opts.tx)}">
<label>User name <input type="text" name="username" autocomplete="username" required maxlength="64" pattern="[A-Za-z0-9._@\\-]+" autofocus></label>
<p><small>Letters, digits and <code>. _ @ -</code>; the same name always opens the same account.</small></p>
<button type="submit">Continue</button>
</form>`,
  );
}

const SCOPE_TEXT: Record<MemoryScope, string> = {
  'memory:read': 'Read your notes (search, read, list)',
  'memory:write': 'Write your notes (create, edit, delete)',
};

export interface ConsentView {
  consent: string;
  sub: string;
  clientLabel: string;
  /** The host the browser returns to, the one fact about the client the user can check. */
  redirectHost: string;
  scopes: MemoryScope[];
  /** A favorites-only sign-in: no permission or memory to choose, nothing of the memories granted. */
  favoritesOnly?: boolean;
  error?: string;
  /** Echoed back after an error. */
  memoriesMode?: 'all' | 'some';
  memoriesList?: string;
}

export function consentPage(v: ConsentView): string {
  if (v.favoritesOnly) {
    return page(
      'Sign in to keep favorites?',
      `<h1>Sign in to keep favorites?</h1>
<p>Signed in as <strong>${escapeHtml(v.sub)}</strong>.</p>
<div class="box"><p><strong>${escapeHtml(v.clientLabel)}</strong> <small>(name given by the application, not verified)</small> will be sent back to <code>${escapeHtml(v.redirectHost)}</code>.</p>
<p>It may keep your list of pinned catalog servers. It gets <strong>no access to your memories</strong>.</p></div>
<form method="post" action="/oauth/consent">
<input type="hidden" name="consent" value="${escapeHtml(v.consent)}">
<button type="submit" name="decision" value="approve">Allow</button>
<button type="submit" name="decision" value="deny">Deny</button>
</form>`,
    );
  }
  const scopeBoxes = v.scopes
    .map((s) => `<label><input type="checkbox" name="scope" value="${s}" checked> <code>${s}</code> — ${escapeHtml(SCOPE_TEXT[s])}</label>`)
    .join('');
  const some = v.memoriesMode === 'some';
  return page(
    'Allow access to your memories?',
    `<h1>Allow access to your memories?</h1>
<p>Signed in as <strong>${escapeHtml(v.sub)}</strong>.</p>
<div class="box"><p><strong>${escapeHtml(v.clientLabel)}</strong> <small>(name given by the application, not verified)</small> will be sent back to <code>${escapeHtml(v.redirectHost)}</code>.</p></div>
${v.error ? `<div class="box err">${escapeHtml(v.error)}</div>` : ''}
<form method="post" action="/oauth/consent">
<input type="hidden" name="consent" value="${escapeHtml(v.consent)}">
<div class="box"><p><strong>Permissions</strong></p>${scopeBoxes}</div>
<div class="box"><p><strong>Which memories</strong></p>
<label><input type="radio" name="memories_mode" value="all"${some ? '' : ' checked'}> All my memories, including ones I create later</label>
<label><input type="radio" name="memories_mode" value="some"${some ? ' checked' : ''}> Only these (comma-separated names, e.g. <code>default, work</code>):</label>
<input type="text" name="memories" value="${escapeHtml(v.memoriesList ?? '')}" maxlength="2000">
</div>
<button type="submit" name="decision" value="approve">Allow</button>
<button type="submit" name="decision" value="deny">Deny</button>
</form>`,
  );
}
