// The site's only script, progressive enhancement over pages that work without it: search
// suggestions, copy buttons, the theme switch, and favorites (sign-in at the deployment's OAuth
// front as a public client with PKCE, then pins through /api/favorites with the bearer token).
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

  async function signIn(pendingPin) {
    const verifier = randomString(32);
    const challenge = b64url(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier)));
    const state = randomString(16);
    sessionStorage.setItem(PENDING, JSON.stringify({ verifier, state, back: location.pathname + location.search, pin: pendingPin ?? null }));
    const q = new URLSearchParams({
      response_type: 'code',
      client_id: CLIENT_ID,
      redirect_uri: REDIRECT_URI,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state,
      scope: 'favorites',
    });
    location.assign(`/oauth/authorize?${q}`);
  }

  /** Back from the front with ?code (or ?error): redeem the code, then return to where sign-in began. */
  async function finishSignIn() {
    const params = new URLSearchParams(location.search);
    if (!params.has('code') && !params.has('error')) return null;
    let pending = null;
    try {
      pending = JSON.parse(sessionStorage.getItem(PENDING) ?? 'null');
    } catch {
      pending = null;
    }
    sessionStorage.removeItem(PENDING);
    history.replaceState(null, '', location.pathname);
    if (params.has('error')) return { error: params.get('error') === 'access_denied' ? 'Sign-in was cancelled.' : 'Sign-in failed; try again.' };
    if (!pending || pending.state !== params.get('state')) return { error: 'This sign-in was not started here (or has expired); try again.' };
    const r = await tokenRequest({ grant_type: 'authorization_code', code: params.get('code'), redirect_uri: REDIRECT_URI, code_verifier: pending.verifier });
    if (!r.ok || !r.json.access_token) return { error: 'Sign-in could not be completed; try again.' };
    writeTokens(fromResponse(r.json));
    return { pending };
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

  // ---------------------------------------------------------------- narrow screens: results first
  function initFilters() {
    if (!matchMedia('(max-width: 56rem)').matches) return;
    for (const d of $$('.filters details.facet')) d.open = false;
  }

  initTheme();
  for (const input of $$('[data-autocomplete]')) initAutocomplete(input);
  initCopy();
  initFilters();
  initFavorites();
})();
