// The libp2p house style (neostandard, TypeScript flavour) plus type-aware rules that catch
// what bites a network node: promises nobody awaits, async callbacks where a sync one is expected.
import { readdirSync } from 'node:fs'
import neostandard from 'neostandard'
import tseslint from 'typescript-eslint'
import rooms from './scripts/eslint-rooms.mjs'

// protons generates protocols/<name>.ts from protocols/<name>.proto (`npm run generate`); those
// are not ours to restyle. The hand-written ones beside them (codec, normalise, packed, uint64,
// ids) decode untrusted bytes, so they are linted like the rest.
const generatedProtocols = readdirSync(new URL('./protocols/', import.meta.url))
  .filter((name) => name.endsWith('.proto'))
  .map((name) => `protocols/${name.slice(0, -'.proto'.length)}.ts`)

export default [
  { ignores: ['dist/**', 'node_modules/**', ...generatedProtocols, 'bench-results/**', 'build/**'] },
  ...neostandard({ ts: true }),
  {
    // issue 42: 120 columns; what cannot be broken (a string, a template, a regular expression, a URL) may run
    // past. `node scripts/fit-columns.mjs --write <files>` fixes the rest.
    rules: {
      '@stylistic/max-len': ['error', {
        code: 120,
        ignoreUrls: true,
        ignoreStrings: true,
        ignoreTemplateLiterals: true,
        ignoreRegExpLiterals: true,
        ignoreComments: false
      }]
    }
  },
  {
    files: ['**/*.ts'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname }
    },
    plugins: { '@typescript-eslint': tseslint.plugin },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      // `void promise` marks a deliberately detached task (errors handled inside)
      'no-void': ['error', { allowAsStatement: true }],
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false, attributes: false } }],
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/return-await': ['error', 'always'],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true }]
    }
  },
  {
    // one way into each room: another folder of src/ is imported through its index.ts
    files: ['src/**/*.ts'],
    plugins: { rooms },
    rules: { 'rooms/through-the-door': 'error' }
  },
  {
    // more than four things to pass: one options object (or `(components, init)`), named at the call
    files: ['src/**/*.ts'],
    // no file of src/ over 400 lines (issue 42): a longer one holds more than one idea
    rules: { 'max-params': ['error', 4], 'max-lines': ['error', { max: 400 }] }
  }
]
