// Starts Swagger UI on /docs from a file, not an inline script, so the page's policy needs no 'unsafe-inline'
// for scripts.
window.ui = SwaggerUIBundle({
  url: "/openapi.json",
  dom_id: "#swagger-ui",
  deepLinking: true,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIBundle.SwaggerUIStandalonePreset],
  layout: "BaseLayout",
  persistAuthorization: false,
});
