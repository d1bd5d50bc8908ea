// Starts Swagger UI on this service's OpenAPI document (/docs). A file, not an inline script: the
// docs page's Content-Security-Policy runs none.
"use strict";

window.ui = SwaggerUIBundle({
  url: "/openapi.json",
  dom_id: "#swagger-ui",
  layout: "BaseLayout",
  presets: [SwaggerUIBundle.presets.apis],
  deepLinking: true,
  // Swagger UI would otherwise send the whole document to a validator on the internet.
  validatorUrl: null,
});
