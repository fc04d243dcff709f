import type { Page } from 'playwright-core';

/**
 * An Atom (RFC 4287) check of a feed document, run in the browser (its DOMParser is a real XML
 * parser, so the project needs no XML library): well-formed XML, the Atom namespace, and the
 * elements the RFC requires. The feed: `id`, `title`, `updated` (an RFC 3339 date) and an `author`
 * unless every entry has one; each entry: `id`, `title`, `updated`, and a `link rel="alternate"`
 * (it has no `content`). Ids must be unique (4.2.6). Returns the problems found, none for a valid feed.
 */
/** The check itself, as browser JavaScript (the test files are compiled without the DOM's types). */
const CHECK = `(text) => {
    const NS = 'http://www.w3.org/2005/Atom';
    const problems = [];
    const doc = new DOMParser().parseFromString(text, 'application/xml');
    if (doc.getElementsByTagName('parsererror').length > 0) return [\`not well-formed XML: \${doc.getElementsByTagName('parsererror')[0].textContent ?? ''}\`];
    const feed = doc.documentElement;
    if (feed.localName !== 'feed' || feed.namespaceURI !== NS) return [\`the root is \${feed.namespaceURI ?? ''}:\${feed.localName}, not an Atom feed\`];
    const rfc3339 = /^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}([.][0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})$/;
    const children = (el, name) => Array.from(el.children).filter((c) => c.namespaceURI === NS && c.localName === name);
    const one = (el, name, where) => {
      const found = children(el, name);
      if (found.length !== 1) problems.push(\`\${where}: \${found.length} <\${name}> elements, exactly 1 required\`);
      return found[0];
    };
    const required = (el, where) => {
      const id = one(el, 'id', where);
      if (id && !/^[a-z][a-z0-9+.-]*:/i.test(id.textContent ?? '')) problems.push(\`\${where}: id "\${id.textContent}" is not an IRI\`);
      const title = one(el, 'title', where);
      if (title && (title.textContent ?? '').trim() === '') problems.push(\`\${where}: empty title\`);
      const updated = one(el, 'updated', where);
      if (updated && !rfc3339.test(updated.textContent ?? '')) problems.push(\`\${where}: updated "\${updated.textContent}" is not an RFC 3339 date\`);
      return id?.textContent ?? '';
    };
    required(feed, 'feed');
    const entries = children(feed, 'entry');
    const ids = new Set();
    entries.forEach((entry, i) => {
      const where = \`entry \${i + 1}\`;
      const id = required(entry, where);
      if (ids.has(id)) problems.push(\`\${where}: id \${id} repeats an earlier entry's\`);
      ids.add(id);
      if (children(entry, 'content').length === 0 && !children(entry, 'link').some((l) => (l.getAttribute('rel') ?? 'alternate') === 'alternate'))
        problems.push(\`\${where}: neither content nor a link rel="alternate"\`);
      if (children(feed, 'author').length === 0 && children(entry, 'author').length === 0) problems.push(\`\${where}: no author, and the feed has none\`);
    });
    return problems;
  }`;

export async function atomProblems(page: Page, xml: string): Promise<string[]> {
  return page.evaluate(`(${CHECK})(${JSON.stringify(xml)})`);
}
