/**
 * The storage adapter of the embedded OpenID Provider (`oidc-provider`) on lading's catalog:
 * sessions, interactions, grants, codes and tokens live in the catalog's OIDC store, so they
 * survive restarts and are shared by every node using the same catalog. It translates the
 * adapter protocol only; it makes no decision about tokens or accounts.
 */
import type { Adapter, AdapterPayload } from 'oidc-provider';
import type { Clock, OidcRecord, OidcStore } from '../../core/ports.ts';

/** Record kinds the provider adapter uses are prefixed, so they never meet lading's own kinds. */
export const PROVIDER_KIND_PREFIX = 'op:';

/** Returns the adapter factory `oidc-provider` expects (`adapter: (name) => Adapter`). */
export function catalogAdapterFactory(catalog: OidcStore, clock: Clock): (name: string) => Adapter {
  return (name) => new CatalogAdapter(catalog, clock, PROVIDER_KIND_PREFIX + name);
}

function decode(record: OidcRecord | null): AdapterPayload | undefined {
  if (!record) return undefined;
  const payload = JSON.parse(record.payload) as AdapterPayload;
  // NOTE: the provider detects a replayed authorization code by the `consumed` field.
  if (record.consumedAt) payload.consumed = Math.floor(record.consumedAt.getTime() / 1000);
  return payload;
}

/** The provider's models that belong to one account: grants (with their tokens) and browser sessions. */
const ACCOUNT_KINDS = ['Grant', 'Session'] as const;

/**
 * Ends everything the embedded provider holds for `accountId`: its browser sessions (so the
 * next sign-in asks for the password again) and its grants with every token issued under
 * them (refresh tokens included). Resolves with how many records were removed. Idempotent.
 */
export async function revokeAccount(catalog: OidcStore, clock: Clock, accountId: string): Promise<number> {
  let removed = 0;
  for (const kind of ACCOUNT_KINDS) {
    for (const record of await catalog.oidcList(PROVIDER_KIND_PREFIX + kind, clock.now())) {
      const payload = JSON.parse(record.payload) as { accountId?: string };
      if (payload.accountId !== accountId) continue;
      if (kind === 'Grant') await catalog.oidcDeleteByGrantId(record.id);
      await catalog.oidcDelete(PROVIDER_KIND_PREFIX + kind, record.id);
      removed++;
    }
  }
  return removed;
}

class CatalogAdapter implements Adapter {
  readonly #catalog: OidcStore;
  readonly #clock: Clock;
  readonly #kind: string;

  constructor(catalog: OidcStore, clock: Clock, kind: string) {
    this.#catalog = catalog;
    this.#clock = clock;
    this.#kind = kind;
  }

  async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
    const now = this.#clock.now();
    await this.#catalog.oidcPut(this.#kind, id, {
      payload: JSON.stringify(payload),
      expiresAt: expiresIn ? new Date(now.getTime() + expiresIn * 1000) : null,
      uid: payload.uid ?? null,
      userCode: payload.userCode ?? null,
      grantId: payload.grantId ?? null,
    });
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    return decode(await this.#catalog.oidcGet(this.#kind, id, this.#clock.now()));
  }

  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    return decode(await this.#catalog.oidcGetByUid(this.#kind, uid, this.#clock.now()));
  }

  async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
    return decode(await this.#catalog.oidcGetByUserCode(this.#kind, userCode, this.#clock.now()));
  }

  async consume(id: string): Promise<void> {
    await this.#catalog.oidcConsume(this.#kind, id, this.#clock.now());
  }

  async destroy(id: string): Promise<void> {
    await this.#catalog.oidcDelete(this.#kind, id);
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    await this.#catalog.oidcDeleteByGrantId(grantId);
  }
}
