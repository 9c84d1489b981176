// Starts Swagger UI on /docs with both documents. Served from this origin (no inline script,
// see the page's Content-Security-Policy); nothing is fetched from anywhere else.
window.addEventListener("load", function () {
  window.ui = SwaggerUIBundle({
    urls: [
      { url: "/openapi.json", name: "Partner API" },
      { url: "/openapi-ops.json", name: "Operations API (coordinators)" },
    ],
    "urls.primaryName": "Partner API",
    dom_id: "#reference",
    deepLinking: true,
    filter: true,
    docExpansion: "list",
    defaultModelsExpandDepth: 1,
    defaultModelExpandDepth: 3,
    displayRequestDuration: true,
    showExtensions: false,
    tryItOutEnabled: false,
    persistAuthorization: false,
    validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    plugins: [SwaggerUIBundle.plugins.DownloadUrl],
    layout: "StandaloneLayout",
  });
});
