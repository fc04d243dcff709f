// The site's only script, progressive enhancement over pages that work without it: search
// suggestions, copy buttons, the theme switch, favorites (sign-in at the deployment's OAuth
// front as a public client with PKCE, then pins through /api/favorites with the bearer token) and
// personal access tokens (a separate sign-in with memory scopes, then /v1/tokens).
// Text from the network is only ever set with textContent: nothing is parsed as HTML.
(() => {
  const $ = (sel, root = document) => root.querySelector(sel);
  const $$ = (sel, root = document) => Array.from(root.querySelectorAll(sel));

  // ---------------------------------------------------------------- announcements
  let toastTimer;
  function say(text) {
    const toast = $('[data-toast]');
    if (!toast) return;
    toast.textContent = text;
    toast.classList.add('show');
    clearTimeout(toastTimer);
    toastTimer = setTimeout(() => toast.classList.remove('show'), 3000);
  }

  // ---------------------------------------------------------------- theme
  function initTheme() {
    const button = $('[data-theme-toggle]');
    if (!button) return;
    const dark = () => {
      const chosen = document.documentElement.dataset.theme;
      return chosen ? chosen === 'dark' : matchMedia('(prefers-color-scheme: dark)').matches;
    };
    const show = () => button.setAttribute('aria-pressed', String(dark()));
    button.hidden = false;
    show();
    button.addEventListener('click', () => {
      const next = dark() ? 'light' : 'dark';
      document.documentElement.dataset.theme = next;
      try {
        localStorage.setItem('mcp-theme', next);
      } catch {
        // Not remembered; the page still switches.
      }
      show();
    });
  }

  // ---------------------------------------------------------------- search suggestions (ARIA 1.2 combobox)
  function initAutocomplete(input) {
    const list = document.getElementById(input.getAttribute('aria-controls'));
    if (!list) return;
    let items = [];
    let active = -1;
    let timer;
    let controller;

    const close = () => {
      list.hidden = true;
      list.replaceChildren();
      input.setAttribute('aria-expanded', 'false');
      input.removeAttribute('aria-activedescendant');
      items = [];
      active = -1;
    };
    const highlight = (i) => {
      active = i;
      for (const [j, li] of $$('[role="option"]', list).entries()) li.setAttribute('aria-selected', String(j === i));
      if (i >= 0) input.setAttribute('aria-activedescendant', `${list.id}-${i}`);
      else input.removeAttribute('aria-activedescendant');
    };
    const go = (item) => {
      location.assign(`/servers/${encodeURIComponent(item.slug)}`);
    };
    const render = () => {
      list.replaceChildren(
        ...items.map((item, i) => {
          const li = document.createElement('li');
          li.id = `${list.id}-${i}`;
          li.setAttribute('role', 'option');
          li.setAttribute('aria-selected', 'false');
          const title = document.createElement('span');
          title.textContent = item.title;
          const name = document.createElement('span');
          name.className = 's-name';
          name.textContent = item.name;
          li.append(title, name);
          // mousedown, not click: it comes before the input's blur closes the list.
          li.addEventListener('mousedown', (e) => {
            e.preventDefault();
            go(item);
          });
          return li;
        }),
      );
      const open = items.length > 0;
      list.hidden = !open;
      input.setAttribute('aria-expanded', String(open));
      active = -1;
    };
    const fetchSuggestions = async (q) => {
      controller?.abort();
      controller = new AbortController();
      try {
        const res = await fetch(`/api/autocomplete?q=${encodeURIComponent(q)}&limit=8`, { signal: controller.signal });
        if (!res.ok) return close();
        const body = await res.json();
        if (input.value.trim() !== q) return;
        items = Array.isArray(body.data) ? body.data : [];
        render();
      } catch (err) {
        if (err.name !== 'AbortError') close();
      }
    };
    input.addEventListener('input', () => {
      clearTimeout(timer);
      const q = input.value.trim();
      if (q === '') return close();
      timer = setTimeout(() => fetchSuggestions(q.slice(0, 100)), 120);
    });
    input.addEventListener('keydown', (e) => {
      if (e.key === 'ArrowDown' && items.length) {
        e.preventDefault();
        highlight((active + 1) % items.length);
      } else if (e.key === 'ArrowUp' && items.length) {
        e.preventDefault();
        highlight(active <= 0 ? items.length - 1 : active - 1);
      } else if (e.key === 'Enter' && active >= 0 && items[active]) {
        e.preventDefault();
        go(items[active]);
      } else if (e.key === 'Escape' && !list.hidden) {
        e.preventDefault();
        close();
      }
    });
    input.addEventListener('blur', close);
  }

  // ---------------------------------------------------------------- copy buttons
  function initCopy() {
    for (const button of $$('[data-copy]')) {
      button.hidden = false;
      button.addEventListener('click', async () => {
        const source = document.getElementById(button.dataset.copy);
        if (!source) return;
        try {
          await navigator.clipboard.writeText(source.textContent);
          say('Copied to the clipboard');
        } catch {
          // No clipboard access (an insecure origin, a denied permission): select the text instead.
          const range = document.createRange();
          range.selectNodeContents(source);
          const sel = getSelection();
          sel.removeAllRanges();
          sel.addRange(range);
          say('Press Ctrl+C (⌘C) to copy the selected text');
        }
      });
    }
  }

  // ---------------------------------------------------------------- sign-in (OAuth 2.1 authorization code + PKCE)
  const body = document.body;
  const CLIENT_ID = body.dataset.clientId;
  const REDIRECT_URI = body.dataset.redirectUri;
  const TOKENS = 'mcp-site-tokens';
  const PENDING = 'mcp-site-signin';

  const b64url = (bytes) =>
    btoa(String.fromCharCode(...new Uint8Array(bytes)))
      .replace(/\+/g, '-')
      .replace(/\//g, '_')
      .replace(/=+$/, '');
  const randomString = (n) => b64url(crypto.getRandomValues(new Uint8Array(n)));

  function readTokens() {
    try {
      const t = JSON.parse(localStorage.getItem(TOKENS) ?? 'null');
      return t && typeof t.access === 'string' ? t : null;
    } catch {
      return null;
    }
  }
  function writeTokens(t) {
    if (t) localStorage.setItem(TOKENS, JSON.stringify(t));
    else localStorage.removeItem(TOKENS);
  }
  function fromResponse(json) {
    return { access: json.access_token, refresh: json.refresh_token, expiresAt: Date.now() + (Number(json.expires_in) || 3600) * 1000 };
  }
  async function tokenRequest(params) {
    const res = await fetch('/oauth/token', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: CLIENT_ID, ...params }),
    });
    const json = await res.json().catch(() => ({}));
    return { ok: res.ok, status: res.status, json };
  }

  /** To the front's sign-in, remembering the PKCE verifier, `state` and what to do once back (`pending`) under `pendingKey`. */
  async function startSignIn({ scope, redirectUri, pendingKey, pending }) {
    const verifier = randomString(32);
    const challenge = b64url(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier)));
    const state = randomString(16);
    sessionStorage.setItem(pendingKey, JSON.stringify({ verifier, state, ...pending }));
    const q = new URLSearchParams({
      response_type: 'code',
      client_id: CLIENT_ID,
      redirect_uri: redirectUri,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state,
      scope,
    });
    location.assign(`/oauth/authorize?${q}`);
  }

  function signIn(pendingPin) {
    return startSignIn({
      scope: 'favorites',
      redirectUri: REDIRECT_URI,
      pendingKey: PENDING,
      pending: { back: location.pathname + location.search, pin: pendingPin ?? null },
    });
  }

  /** Back from the front with ?code (or ?error): the token response and what was pending, or an error; null when not back from a sign-in. */
  async function redeem(pendingKey, redirectUri) {
    const params = new URLSearchParams(location.search);
    if (!params.has('code') && !params.has('error')) return null;
    let pending = null;
    try {
      pending = JSON.parse(sessionStorage.getItem(pendingKey) ?? 'null');
    } catch {
      pending = null;
    }
    sessionStorage.removeItem(pendingKey);
    history.replaceState(null, '', location.pathname);
    if (params.has('error')) return { error: params.get('error') === 'access_denied' ? 'Sign-in was cancelled.' : 'Sign-in failed; try again.' };
    if (!pending || pending.state !== params.get('state')) return { error: 'This sign-in was not started here (or has expired); try again.' };
    const r = await tokenRequest({ grant_type: 'authorization_code', code: params.get('code'), redirect_uri: redirectUri, code_verifier: pending.verifier });
    if (!r.ok || !r.json.access_token) return { error: 'Sign-in could not be completed; try again.' };
    return { pending, json: r.json };
  }

  /** Favorites: redeem the code, then return to where sign-in began. */
  async function finishSignIn() {
    const r = await redeem(PENDING, REDIRECT_URI);
    if (!r || r.error) return r;
    writeTokens(fromResponse(r.json));
    return { pending: r.pending };
  }

  /** A valid access token, refreshed when close to expiry; tabs take turns so a refresh token is never spent twice. */
  async function accessToken(force = false) {
    const current = readTokens();
    if (!current) return null;
    if (!force && current.expiresAt - 60_000 > Date.now()) return current.access;
    const refresh = async () => {
      const latest = readTokens();
      if (!latest) return null;
      // Another tab may have refreshed while this one waited for the lock.
      if (latest.access !== current.access && latest.expiresAt - 60_000 > Date.now()) return latest.access;
      if (!latest.refresh) {
        writeTokens(null);
        return null;
      }
      const r = await tokenRequest({ grant_type: 'refresh_token', refresh_token: latest.refresh });
      if (!r.ok || !r.json.access_token) {
        // Refused (expired, revoked): signed out. A network failure or 5xx keeps the tokens for a retry.
        if (r.status === 400 || r.status === 401) writeTokens(null);
        return null;
      }
      const next = fromResponse(r.json);
      writeTokens(next);
      return next.access;
    };
    return navigator.locks ? navigator.locks.request('mcp-site-tokens', refresh) : refresh();
  }

  async function api(method, path, payload) {
    for (let attempt = 0; attempt < 2; attempt++) {
      const token = await accessToken(attempt > 0);
      if (!token) return { status: 401 };
      const res = await fetch(path, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(payload && { 'content-type': 'application/json' }) },
        ...(payload && { body: JSON.stringify(payload) }),
      });
      if (res.status === 401 && attempt === 0) continue;
      const json = await res.json().catch(() => ({}));
      return { status: res.status, json };
    }
    return { status: 401 };
  }

  async function signOut() {
    const t = readTokens();
    writeTokens(null);
    if (t?.refresh) {
      await fetch('/oauth/revoke', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token: t.refresh, client_id: CLIENT_ID }),
      }).catch(() => undefined);
    }
  }

  // ---------------------------------------------------------------- favorites
  let pinned = new Set();

  function showPin(button) {
    const on = pinned.has(button.dataset.pin);
    button.setAttribute('aria-pressed', String(on));
    $('.pin-mark', button).textContent = on ? '★' : '☆';
    $('.pin-text', button).textContent = on ? 'Pinned' : 'Pin';
  }

  async function loadPins() {
    if (!readTokens()) return false;
    const r = await api('GET', '/api/favorites?view=full');
    if (r.status !== 200 || !r.json.success) return false;
    pinned = new Set(r.json.data.map((s) => s.slug));
    return r.json.data;
  }

  async function toggle(button) {
    const slug = button.dataset.pin;
    const title = button.dataset.title ?? slug;
    if (!readTokens()) return signIn(slug);
    button.disabled = true;
    const on = pinned.has(slug);
    const r = on ? await api('DELETE', `/api/favorites/${encodeURIComponent(slug)}`) : await api('POST', '/api/favorites', { slug });
    button.disabled = false;
    if (r.status === 401) return signIn(on ? null : slug);
    if (r.status !== 200) return say(r.json?.error?.message ?? 'That did not work; try again.');
    if (on) pinned.delete(slug);
    else pinned.add(slug);
    for (const b of $$(`[data-pin]`)) if (b.dataset.pin === slug) showPin(b);
    say(on ? `Unpinned ${title}` : `Pinned ${title}`);
    if (on) $(`[data-favorites-list] [data-slug="${CSS.escape(slug)}"]`)?.remove();
  }

  function initPins() {
    for (const button of $$('[data-pin]')) {
      showPin(button);
      if (button.dataset.ready) continue;
      button.dataset.ready = '1';
      button.hidden = false;
      button.addEventListener('click', () => toggle(button));
    }
  }

  /** A card of the favorites list, built from the API's JSON with DOM calls only. */
  function favoriteCard(s) {
    const li = document.createElement('li');
    li.className = 'card';
    li.dataset.slug = s.slug;
    const bodyDiv = document.createElement('div');
    bodyDiv.className = 'card-body';
    const h = document.createElement('h2');
    h.className = 'card-title';
    const a = document.createElement('a');
    a.href = `/servers/${encodeURIComponent(s.slug)}`;
    a.textContent = s.title ?? s.name.split('/').pop();
    h.append(a);
    const name = document.createElement('p');
    name.className = 'card-name';
    name.textContent = s.name;
    const desc = document.createElement('p');
    desc.className = 'card-desc';
    desc.textContent = s.description;
    bodyDiv.append(h, name, desc);
    const button = document.createElement('button');
    button.type = 'button';
    button.className = 'pin';
    button.dataset.pin = s.slug;
    button.dataset.title = a.textContent;
    const mark = document.createElement('span');
    mark.className = 'pin-mark';
    mark.setAttribute('aria-hidden', 'true');
    const text = document.createElement('span');
    text.className = 'pin-text';
    const hidden = document.createElement('span');
    hidden.className = 'sr-only';
    hidden.textContent = ` ${a.textContent}`;
    button.append(mark, ' ', text, hidden);
    li.append(bodyDiv, button);
    return li;
  }

  async function initFavoritesPage(result) {
    const root = $('[data-favorites]');
    if (!root) return;
    const status = $('[data-favorites-status]', root);
    const authStatus = $('[data-auth-status]', root);
    const signInButton = $('[data-sign-in]', root);
    const signOutButton = $('[data-sign-out]', root);
    const list = $('[data-favorites-list]', root);
    signInButton.addEventListener('click', () => signIn(null));
    signOutButton.addEventListener('click', async () => {
      await signOut();
      location.reload();
    });
    if (result?.error) say(result.error);
    if (!readTokens()) {
      authStatus.textContent = result?.error ?? 'Pins are kept with your account. Sign in to see and change them.';
      signInButton.hidden = false;
      return;
    }
    authStatus.textContent = 'Signed in.';
    signOutButton.hidden = false;
    status.textContent = 'Loading your pins…';
    const data = await loadPins();
    if (data === false) {
      if (!readTokens()) {
        authStatus.textContent = 'Your sign-in has expired. Sign in again to see your pins.';
        signOutButton.hidden = true;
        signInButton.hidden = false;
        status.textContent = '';
      } else {
        status.textContent = 'Your pins could not be loaded; reload the page to try again.';
      }
      return;
    }
    status.textContent = data.length === 0 ? 'Nothing pinned yet: use “Pin” on any server.' : `${data.length} pinned server${data.length === 1 ? '' : 's'}`;
    list.replaceChildren(...data.map(favoriteCard));
  }

  async function initFavorites() {
    const result = await finishSignIn().catch(() => ({ error: 'Sign-in could not be completed; try again.' }));
    if (result?.pending) {
      const { pin, back } = result.pending;
      if (pin) await api('POST', '/api/favorites', { slug: pin });
      // Back to the page where sign-in began (a relative path of this site only).
      if (typeof back === 'string' && back.startsWith('/') && !back.startsWith('//') && back !== location.pathname) {
        location.replace(back);
        return;
      }
    }
    await loadPins().catch(() => false);
    initPins();
    await initFavoritesPage(result);
    if ($('[data-favorites]')) initPins();
  }

  // ---------------------------------------------------------------- personal access tokens
  // A sign-in of its own, with memory scopes (the favorites one reaches no memory). Its access token
  // lives in this tab only (sessionStorage) and is not refreshed: managing tokens is a short visit,
  // and a memory-scoped credential should not outlive it. Sign-out revokes it.
  const PAT_PENDING = 'mcp-site-pat-signin';
  const PAT_SESSION = 'mcp-site-pat-session';

  function patSession() {
    try {
      const t = JSON.parse(sessionStorage.getItem(PAT_SESSION) ?? 'null');
      return t && typeof t.access === 'string' && t.expiresAt > Date.now() ? t : null;
    } catch {
      return null;
    }
  }

  async function tokensApi(method, path, payload) {
    const session = patSession();
    if (!session) return { status: 401, json: {} };
    const res = await fetch(path, {
      method,
      headers: { authorization: `Bearer ${session.access}`, ...(payload && { 'content-type': 'application/json' }) },
      ...(payload && { body: JSON.stringify(payload) }),
    });
    return { status: res.status, json: await res.json().catch(() => ({})) };
  }

  const day = (iso) => (typeof iso === 'string' ? iso.slice(0, 10) : '');

  /** A row of the token table, built from the API's JSON with DOM calls only. */
  function tokenRow(t, onRevoke) {
    const tr = document.createElement('tr');
    tr.dataset.tokenId = t.id;
    const cells = [
      t.name,
      t.id,
      t.scopes.includes('memory:write') ? 'Read and write' : 'Read',
      t.memories ? t.memories.join(', ') : 'All',
      t.pathPrefix ? `${t.pathPrefix}/` : 'Whole memories',
      day(t.created),
      day(t.expires),
      t.lastUsed ? day(t.lastUsed) : 'Never',
    ];
    for (const [i, text] of cells.entries()) {
      const td = document.createElement(i === 0 ? 'th' : 'td');
      if (i === 0) td.scope = 'row';
      if (i === 1) {
        const code = document.createElement('code');
        code.textContent = text;
        td.append(code);
      } else td.textContent = text;
      tr.append(td);
    }
    const td = document.createElement('td');
    const button = document.createElement('button');
    button.type = 'button';
    button.textContent = 'Revoke';
    const hidden = document.createElement('span');
    hidden.className = 'sr-only';
    hidden.textContent = ` ${t.name}`;
    button.append(hidden);
    button.addEventListener('click', () => onRevoke(t, button));
    td.append(button);
    tr.append(td);
    return tr;
  }

  /** The request the form describes: empty optional fields are left out (the API's defaults apply). */
  function tokenRequestOf(form) {
    const data = new FormData(form);
    const memories = String(data.get('memories') ?? '')
      .split(/[\s,]+/)
      .filter((m) => m !== '');
    const folder = String(data.get('pathPrefix') ?? '').trim();
    return {
      name: String(data.get('name') ?? ''),
      scopes: data.get('access') === 'write' ? ['memory:read', 'memory:write'] : ['memory:read'],
      ...(memories.length > 0 && { memories }),
      ...(folder !== '' && { pathPrefix: folder }),
      expiresInDays: Number(data.get('expiresInDays')),
    };
  }

  async function initTokensPage() {
    const root = $('[data-tokens]');
    const redirectUri = root.dataset.redirectUri;
    const authStatus = $('[data-auth-status]', root);
    const status = $('[data-tokens-status]', root);
    const signInButton = $('[data-sign-in]', root);
    const signOutButton = $('[data-sign-out]', root);
    const form = $('[data-token-form]', root);
    const table = $('[data-token-table]', root);
    const rows = $('[data-token-rows]', root);
    const fresh = $('[data-new-token]', root);
    signInButton.addEventListener('click', () =>
      startSignIn({ scope: 'memory:read memory:write', redirectUri, pendingKey: PAT_PENDING, pending: {} }).catch(() =>
        say('Sign-in could not start; try again.'),
      ),
    );
    signOutButton.addEventListener('click', async () => {
      const session = patSession();
      sessionStorage.removeItem(PAT_SESSION);
      if (session) {
        await fetch('/oauth/revoke', {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ token: session.access, client_id: CLIENT_ID }),
        }).catch(() => undefined);
      }
      location.reload();
    });

    const back = await redeem(PAT_PENDING, redirectUri).catch(() => ({ error: 'Sign-in could not be completed; try again.' }));
    if (back?.json) {
      sessionStorage.setItem(
        PAT_SESSION,
        JSON.stringify({ access: back.json.access_token, expiresAt: Date.now() + (Number(back.json.expires_in) || 3600) * 1000 }),
      );
    }
    const signedOut = (message) => {
      authStatus.textContent = message;
      signInButton.hidden = false;
      signOutButton.hidden = true;
      form.hidden = true;
      table.hidden = true;
      status.textContent = '';
    };
    if (back?.error) say(back.error);
    if (!patSession()) return signedOut(back?.error ?? 'Sign in to see, create and revoke your tokens.');
    authStatus.textContent = 'Signed in. The tokens you create can hold at most what you allowed at sign-in.';
    signOutButton.hidden = false;
    form.hidden = false;

    const refused = (r, what) => {
      if (r.status === 401) return signedOut('Your sign-in has expired. Sign in again to manage your tokens.');
      const message = r.json?.error?.message ?? `${what} did not work; try again.`;
      status.textContent = message;
      say(message);
    };
    const load = async () => {
      const r = await tokensApi('GET', '/v1/tokens');
      if (r.status !== 200) return refused(r, 'Loading your tokens');
      rows.replaceChildren(...r.json.tokens.map((t) => tokenRow(t, revoke)));
      table.hidden = r.json.tokens.length === 0;
      status.textContent = r.json.tokens.length === 0 ? 'No tokens yet.' : `${r.json.tokens.length} active token${r.json.tokens.length === 1 ? '' : 's'}`;
    };
    async function revoke(t, button) {
      button.disabled = true;
      const r = await tokensApi('DELETE', `/v1/tokens/${encodeURIComponent(t.id)}`);
      if (r.status !== 200) {
        button.disabled = false;
        return refused(r, 'Revoking');
      }
      say(`Revoked ${t.name}`);
      await load();
    }
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      const submit = $('button[type="submit"]', form);
      submit.disabled = true;
      const r = await tokensApi('POST', '/v1/tokens', tokenRequestOf(form));
      submit.disabled = false;
      if (r.status !== 201) return refused(r, 'Creating the token');
      $('[data-new-token-value]', root).textContent = r.json.token;
      fresh.hidden = false;
      $('#new-token-title', root).focus();
      form.reset();
      say(`Created ${r.json.name}: copy it now`);
      await load();
    });
    await load();
  }

  // ---------------------------------------------------------------- narrow screens: results first
  function initFilters() {
    if (!matchMedia('(max-width: 56rem)').matches) return;
    for (const d of $$('.filters details.facet')) d.open = false;
  }

  initTheme();
  for (const input of $$('[data-autocomplete]')) initAutocomplete(input);
  initCopy();
  initFilters();
  // The Tokens page has a sign-in of its own; its ?code is not the favorites' to redeem.
  if ($('[data-tokens]')) initTokensPage();
  else initFavorites();
})();
