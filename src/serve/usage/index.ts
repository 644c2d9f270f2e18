/**
 * Usage you can prove (issue 17 item 4): a lease's provider and renter co-sign its usage at
 * intervals over /idlegrid/usage/1.0.0 and both keep the statements in their ledgers, where
 * they are the only evidence of a service's earnings and uptime.
 */
export { UsageAccount, UsageCounter, countersignedFigures, type LeaseTerms, type UsageCounts, type UsageFigures } from './account.js'
export { UsageDesk, usageHandler, type UsageDeskStats } from './desk.js'
export { UsageReporter, USAGE_REPORT_DEFAULTS, type UsageReport } from './reporter.js'
export { answerOne, exchange, type UsageDialer } from './frames.js'
