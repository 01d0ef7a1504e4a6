/**
 * Imported first by the server's entry points, so that V8 is tuned before any other module is
 * evaluated: pretenuring decisions made while modules load would stay with their allocation sites.
 */
import { turnOffPretenuring } from "./processTuning.ts"

turnOffPretenuring()
