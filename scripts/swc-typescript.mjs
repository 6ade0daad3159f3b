// An esbuild plugin that compiles our TypeScript with SWC, shared by the build (scripts/build.mjs)
// and the test helpers that run as processes of their own (test/support/global-setup.ts).
import { transform } from '@swc/core';
import { readFile } from 'node:fs/promises';

/** Compiles our TypeScript the way vitest does (vitest.config.ts): legacy decorators with metadata. */
export const swcTypeScript = {
  name: 'swc-typescript',
  setup(builder) {
    builder.onLoad({ filter: /[\\/](src|test)[\\/].*\.ts$/ }, async ({ path }) => {
      const { code } = await transform(await readFile(path, 'utf8'), {
        filename: path,
        sourceMaps: 'inline',
        jsc: {
          parser: { syntax: 'typescript', decorators: true },
          transform: { legacyDecorator: true, decoratorMetadata: true },
          target: 'es2022',
          keepClassNames: true,
        },
        module: { type: 'es6' },
      });
      return { contents: code, loader: 'js' };
    });
  },
};
