/** The package version, fixed at build time (recorded in plans and inventories). */
export { VERSION } from "./generated/version.js";
