/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.[tj]sx?$': ['ts-jest', { tsconfig: { allowJs: true, isolatedModules: true }, diagnostics: false }],
  },
  // ESM-only packages: middy, and stemmer (the Porter stemmer of the search analysis); and
  // isomorphic-git, whose ES module build is the one the functions bundle (lib/bundling-externals.ts,
  // BUNDLE_ALIASES), so the tests run that build too rather than the CommonJS one Node would pick.
  transformIgnorePatterns: ['/node_modules/(?!@middy/|stemmer/|isomorphic-git/)'],
  moduleNameMapper: { '^isomorphic-git$': '<rootDir>/node_modules/isomorphic-git/index.js' },
  setupFiles: ['<rootDir>/test/support/env.ts'],
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  testTimeout: 60000,
  maxWorkers: 2,
};
