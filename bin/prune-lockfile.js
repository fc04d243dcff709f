#!/usr/bin/env node
// `npm run lock:prune`: drops from package-lock.json the optional dependencies that have no entry
// in it. The registry these machines use does not carry every platform's prebuilt binding (e.g.
// unrs-resolver's darwin/windows builds, through jest 30): `npm install` then records the optional
// dependency but not its package, and `npm ci` refuses the lock as out of sync. Run after `npm install`.
const fs = require('node:fs');
const path = require('node:path');

const file = path.join(__dirname, '..', 'package-lock.json');
const lock = JSON.parse(fs.readFileSync(file, 'utf8'));
const removed = [];
for (const [where, pkg] of Object.entries(lock.packages)) {
  for (const dep of Object.keys(pkg.optionalDependencies ?? {})) {
    const nested = where ? `${where}/node_modules/${dep}` : `node_modules/${dep}`;
    if (!lock.packages[nested] && !lock.packages[`node_modules/${dep}`]) {
      delete pkg.optionalDependencies[dep];
      removed.push(`${where || '(root)'} → ${dep}`);
    }
  }
}
fs.writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
console.log(removed.length ? `pruned ${removed.length} unavailable optional dependencies:\n${removed.join('\n')}` : 'lockfile already consistent');
