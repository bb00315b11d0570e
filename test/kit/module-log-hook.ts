/**
 * Preloaded into a File Cloud process (`node --import <this file>`) by tests
 * that check which packages a deployment loads: appends the URL of every
 * module the process loads, by `import` or `require`, to the file
 * FC_TEST_MODULE_LOG names. Node's own synchronous module hooks, so nothing
 * of File Cloud is changed or stubbed.
 */
import { appendFileSync } from 'node:fs';
import { registerHooks } from 'node:module';

const log = process.env.FC_TEST_MODULE_LOG;
if (log) {
  registerHooks({
    load(url, context, nextLoad) {
      appendFileSync(log, `${url}\n`);
      return nextLoad(url, context);
    },
  });
}
