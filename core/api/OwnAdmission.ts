/**
 * The middleware of the groups whose handlers admit each request themselves, through
 * Admission: Tavily's (the key may come in the body) and SearXNG's (a setting may open it).
 * It only declares the bearer scheme, so that /openapi.json and generated clients know the
 * key goes in Authorization; a middleware cannot read the body, so the handler admits.
 */
import { Layer } from "effect"
import { HttpApiMiddleware, HttpApiSecurity } from "effect/http-api"

export class OwnAdmission extends HttpApiMiddleware.Service<OwnAdmission>()("periscope/api/OwnAdmission", {
  security: { bearer: HttpApiSecurity.bearer }
}) {
  static readonly layer = Layer.succeed(OwnAdmission, OwnAdmission.of({ bearer: (httpEffect) => httpEffect }))
}
