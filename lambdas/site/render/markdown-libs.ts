/**
 * The README renderer's libraries, on their own: never imported statically. `markdown.ts` requires
 * this module by a computed specifier on the first README an instance renders, and CDK bundles it as
 * `markdown-libs.js` beside the site function's `index.js` (lib/site.ts), so markdown-it and
 * sanitize-html (with htmlparser2 and postcss, about 330 KB) stay out of the function's bundle and
 * module init: the home, list and search pages never need them.
 */
export { default as MarkdownIt } from 'markdown-it';
export { default as sanitizeHtml } from 'sanitize-html';
