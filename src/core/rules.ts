/**
 * Backend rules: which actions run when something happens at a path. A rules file has one
 * rule per line, `<event> <path pattern> <action>`, `#` starting a comment:
 *
 *     object.created      /lading/home/**   pid.register
 *     object.overwritten  /lading/home/**   pid.update
 *
 * In patterns `*` matches within one path segment and `**` any number of whole segments.
 * Rules apply to paths, never to endpoints, so every route that changes a path is covered.
 * Parsing reports the line of every mistake; matching is pure.
 */
import type { BackendEvent, BackendEventType, JobInput } from './types.ts';

export const EVENTS: readonly BackendEventType[] = [
  'object.created', 'object.overwritten', 'object.renamed', 'collection.created', 'collection.renamed',
  'entity.published', 'entity.unpublished', 'entity.trashed', 'entity.restored', 'entity.purged', 'entity.taken_down',
];
export const ACTIONS = ['pid.register', 'pid.update'] as const;
export type Action = (typeof ACTIONS)[number];

export interface Rule {
  event: BackendEventType;
  pattern: string;
  action: Action;
  line: number;
  regex: RegExp;
}

export class RulesError extends Error {
  override name = 'RulesError';
}

/** The payload of a `rule` job. */
export interface RuleJob {
  action: Action;
  event: BackendEventType;
  entityId: string;
  path: string;
  from?: string;
  /** Set on the jobs a collection's change fans out to the entities below it: that collection's path. */
  below?: string;
}

export const RULE_JOB = 'rule';

function compile(pattern: string, line: number): RegExp {
  if (!pattern.startsWith('/')) throw new RulesError(`line ${line}: the path pattern '${pattern}' must be absolute (start with '/').`);
  const parts = pattern.split('/').slice(1);
  let re = '^';
  for (const [i, part] of parts.entries()) {
    if (part === '**') {
      // Any number of segments, including none.
      re += i === parts.length - 1 ? '(?:/.*)?' : '(?:/[^/]+)*';
      continue;
    }
    if (part.includes('**')) throw new RulesError(`line ${line}: '**' must be a whole segment in '${pattern}'.`);
    if (part === '' && i !== parts.length - 1) throw new RulesError(`line ${line}: empty segment in '${pattern}'.`);
    if (part === '') continue;
    re += '/' + part.split('*').map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('[^/]*');
  }
  return new RegExp(re + '$', 'u');
}

/** Parses a rules file. Throws `RulesError` naming the line of the first mistake. */
export function parseRules(text: string, source = 'rules'): RuleSet {
  const rules: Rule[] = [];
  for (const [index, raw] of text.split(/\r?\n/).entries()) {
    const line = index + 1;
    const content = raw.replace(/#.*$/, '').trim();
    if (!content) continue;
    const fields = content.split(/\s+/);
    const where = `${source}: line ${line}`;
    if (fields.length !== 3) throw new RulesError(`${where}: expected '<event> <path pattern> <action>', got ${fields.length} field(s).`);
    const [event, pattern, action] = fields as [string, string, string];
    if (!EVENTS.includes(event as BackendEventType)) throw new RulesError(`${where}: unknown event '${event}' (known: ${EVENTS.join(', ')}).`);
    if (!ACTIONS.includes(action as Action)) throw new RulesError(`${where}: unknown action '${action}' (known: ${ACTIONS.join(', ')}).`);
    let regex: RegExp;
    try {
      regex = compile(pattern, line);
    } catch (err) {
      throw new RulesError(`${source}: ${(err as Error).message}`);
    }
    rules.push({ event: event as BackendEventType, pattern, action: action as Action, line, regex });
  }
  return new RuleSet(rules);
}

export class RuleSet {
  readonly rules: readonly Rule[];

  constructor(rules: readonly Rule[]) {
    this.rules = rules;
  }

  static readonly empty = new RuleSet([]);

  /** The actions that apply to `event` (each action once, in file order). */
  actionsFor(event: Pick<BackendEvent, 'type' | 'path'>): Action[] {
    const out: Action[] = [];
    for (const rule of this.rules) {
      if (rule.event === event.type && rule.regex.test(event.path) && !out.includes(rule.action)) out.push(rule.action);
    }
    return out;
  }

  /** The jobs an event causes, for the catalog to enqueue in the change's transaction. */
  jobsFor = (event: BackendEvent): JobInput[] =>
    this.actionsFor(event).map((action) => ({
      kind: RULE_JOB,
      payload: JSON.stringify({ action, event: event.type, entityId: event.entityId, path: event.path, from: event.from } satisfies RuleJob),
    }));
}
