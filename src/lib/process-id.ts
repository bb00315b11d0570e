import { randomUUID } from 'node:crypto';

/**
 * This process among the deployment's, on every node: the owner of its liveness lease
 * (src/cluster/liveness.ts) and the first part of the owner of every lease it takes for a change
 * (src/storage/coordination.ts). So the leader that finds it dead can free what it held
 * (LeaseRepo.releaseHeldBy) before the rescan that journals what it left: a rescan leaves a path
 * whose lease is held to the change holding it, and a dead process's change never comes.
 */
export const PROCESS_ID = randomUUID();

/** The owner of one hold of this process: `<process>/<hold>`, unique per hold. */
export const holdOwner = (): string => `${PROCESS_ID}/${randomUUID()}`;

/** How the owner of every hold of `process` begins. */
export const holdsOf = (process: string): string => `${process}/`;
