/**
 * The catalog contract: one suite per role of the `Catalog` port, listed by role so that a
 * role without a suite (or a suite without a role) does not compile, and the one function that
 * runs them all against a driver. Each driver's test file calls `runCatalogContracts` with a
 * factory of fresh, empty catalogs. The cases live in the role suites, not here.
 */
import type { CatalogRole } from '../../src/core/ports.ts';
import type { CatalogTarget, ContractSuite } from './catalog-contract-support.ts';
import { auditContract } from './catalog-audit-contract.ts';
import { accountsContract } from './catalog-accounts-contract.ts';
import { caContract } from './catalog-ca-contract.ts';
import { blobsContract } from './catalog-blobs-contract.ts';
import { fixityContract } from './catalog-fixity-contract.ts';
import { handlesContract } from './catalog-handles-contract.ts';
import { locksContract } from './catalog-locks-contract.ts';
import { jobsContract } from './catalog-jobs-contract.ts';
import { namespaceContract } from './catalog-namespace-contract.ts';
import { oidcContract } from './catalog-oidc-contract.ts';
import { publicationsContract } from './catalog-publications-contract.ts';
import { quotasContract } from './catalog-quotas-contract.ts';
import { searchContract } from './catalog-search-contract.ts';
import { s3KeysContract } from './catalog-s3-keys-contract.ts';
import { sessionsContract } from './catalog-sessions-contract.ts';
import { sharesContract } from './catalog-shares-contract.ts';
import { uploadsContract } from './catalog-uploads-contract.ts';

// NOTE: other contracts and tests import the error-code assertion from here.
export { rejectsWith } from './catalog-contract-support.ts';

/** The contract suite of every catalog role. */
export const CATALOG_CONTRACTS = {
  namespace: namespaceContract,
  accounts: accountsContract,
  sessions: sessionsContract,
  jobs: jobsContract,
  handles: handlesContract,
  blobs: blobsContract,
  oidc: oidcContract,
  publications: publicationsContract,
  shares: sharesContract,
  uploads: uploadsContract,
  locks: locksContract,
  s3Keys: s3KeysContract,
  fixity: fixityContract,
  cas: caContract,
  quotas: quotasContract,
  audit: auditContract,
  search: searchContract,
} satisfies Record<CatalogRole, ContractSuite>;

/** Registers every role's suite for the driver `target`. */
export function runCatalogContracts(target: CatalogTarget): void {
  for (const suite of Object.values(CATALOG_CONTRACTS)) suite(target);
}
