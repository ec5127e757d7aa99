/**
 * Property tests draw fresh inputs on every run here, so each local run searches somewhere new;
 * CI draws one fixed sample, so whether a change lands never depends on the luck of a new find.
 * fast-check prints the seed of any failure, and FUZZ_SEED=<seed> replays it. The open-ended
 * search is `npm run fuzz`.
 */
import fc from "fast-check";

const seed = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : process.env.CI ? 20261126 : undefined;
if (seed !== undefined) fc.configureGlobal({ ...fc.readConfigureGlobal(), seed });
