import { UsageError } from '../config/load.js';
import type { Config } from '../config/options.js';
import { openCommandServices } from './command-services.js';
import { cliAudit } from './cli-audit.js';

export const GROUP_COMMANDS = {
  add: { usage: 'group add NAME', summary: 'Creates a group.', arity: 1 },
  remove: { usage: 'group remove NAME', summary: 'Removes a group; what was granted to it ends at once.', arity: 1 },
  member: { usage: 'group member NAME add|remove USER', summary: 'Adds a user to a group, or removes them (their access through the group ends at once).', arity: 3 },
  list: { usage: 'group list', summary: 'Lists groups and their members.', arity: 0 },
} satisfies Record<string, { usage: string; summary: string; arity: number }>;

/** Runs one group command against the data directory; safe beside a running server, which sees the change at once. */
export async function runGroupCommand(command: keyof typeof GROUP_COMMANDS, args: readonly string[], config: Config): Promise<number> {
  const [name, op, user] = args as [string, string | undefined, string | undefined];
  if (command === 'member' && op !== 'add' && op !== 'remove') throw new UsageError(`usage: file-cloud ${GROUP_COMMANDS.member.usage}`);
  const opened = await openCommandServices(config);
  const { groups } = opened.services;
  const audit = cliAudit(opened.services.audit);
  try {
    switch (command) {
      case 'add':
        await groups.add(name);
        await audit('group.created', name);
        process.stderr.write(`Created group "${name}".\n`);
        break;
      case 'remove':
        await groups.remove(name);
        await audit('group.removed', name);
        process.stderr.write(`Removed group "${name}".\n`);
        break;
      case 'member':
        await groups.changeMembers(name, op === 'add' ? [user as string] : [], op === 'remove' ? [user as string] : []);
        await audit('group.changed', name, op === 'add' ? { add: [user] } : { remove: [user] });
        process.stderr.write(op === 'add' ? `Added "${user}" to group "${name}".\n` : `Removed "${user}" from group "${name}".\n`);
        break;
      case 'list':
        for (const g of await groups.list()) process.stdout.write(`${g.name}\t${g.members.join(',')}\n`);
        break;
    }
  } finally {
    await opened.close();
  }
  return 0;
}

export function groupHelp(): string {
  const width = Math.max(...Object.values(GROUP_COMMANDS).map((c) => c.usage.length)) + 2;
  const lines = Object.values(GROUP_COMMANDS).map((c) => `  file-cloud ${c.usage.padEnd(width)}${c.summary}`);
  return ['Usage:', ...lines, ''].join('\n');
}
