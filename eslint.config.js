import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * The layers of src/ (docs/architecture.md "Layers"), lowest first: a module may import its own
 * layer and those below it, never one above. `npm test` runs the lint, so the next upward import
 * fails the build instead of waiting for a review.
 */
const LAYERS = [
  { name: 'domain and lib', folders: ['domain', 'lib', 'zip'] },
  { name: 'store and storage', folders: ['store', 'storage', 'cluster', 'thumbnails'] },
  { name: 'services', folders: ['services'] },
  { name: 'front ends', folders: ['http', 'dav', 'basic', 'share-pages', 'routes', 'ops', 'config', 'sftp'] },
  { name: 'app', folders: ['app'] },
  { name: 'cli', folders: ['cli'] },
];

/** `no-restricted-imports` for one layer: every folder of the layers above it, at any depth of relative path. */
function layerRule(index) {
  const above = LAYERS.slice(index + 1).flatMap((l) => l.folders);
  return {
    files: LAYERS[index].folders.map((f) => `src/${f}/**/*.ts`),
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: [...above.map((f) => `**/${f}/*`), '**/main.js'],
              message: `${LAYERS[index].name} may not import from a layer above it (${above.join(', ')}, main): move the name down to where both can see it (docs/architecture.md "Layers").`,
            },
          ],
        },
      ],
    },
  };
}

/**
 * The API's wire spelling (snake_case: `created_at`, `is_file`) belongs to the front ends: a service
 * returns domain records (camelCase, epoch milliseconds) and the route builds the view
 * (src/routes/views.ts). A snake_case property a service writes, in an object or a type, fails the
 * lint. Not a wire name: the storage error codes a `storageCall` maps to messages.
 */
const SNAKE = '/^[a-z][a-z0-9]*(_[a-z0-9]+)+$/';
const WIRE_MESSAGE = 'A service does not spell the wire: return the domain record (camelCase, epoch ms) and let the front end build the snake_case view (src/routes/views.ts; docs/architecture.md "Layers").';
const wireKeys = {
  files: ['src/services/**/*.ts'],
  ignores: ['src/services/**/*.test.ts'],
  rules: {
    'no-restricted-syntax': [
      'error',
      ...[
        `Property:not(CallExpression[callee.name="storageCall"] > ObjectExpression > Property)[key.name=${SNAKE}]`,
        `Property[key.value=${SNAKE}]`,
        `TSPropertySignature[key.name=${SNAKE}]`,
        `TSPropertySignature[key.value=${SNAKE}]`,
      ].map((selector) => ({ selector, message: WIRE_MESSAGE })),
    ],
  },
};

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'web/dist/**', 'data/**', 'test-output/**', 'packages/*/dist/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'off',
    },
  },
  ...LAYERS.slice(0, -1).map((_, i) => layerRule(i)),
  wireKeys,
  {
    // The sync client is a client: the server's HTTP API is all it may know (docs/sync.md), so it
    // installs on a laptop without the server's dependencies.
    files: ['packages/sync/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [{ group: ['../*'], message: 'packages/sync imports only its own modules and Node\'s: it speaks to the server over HTTP.' }],
        },
      ],
    },
  },
);
