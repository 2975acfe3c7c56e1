// The API reference (/api/v1/docs): Swagger UI renders the service's OpenAPI document in the
// element that names it. This file is served from this origin, so the page's CSP (script-src
// 'self', nothing inline) admits it; Swagger UI asks nothing of another origin once its validator
// badge is off (validatorUrl: null).
(() => {
  const start = () => {
    const root = document.getElementById('api-reference');
    if (!root || typeof window.SwaggerUIBundle !== 'function') return;
    window.SwaggerUIBundle({
      url: root.dataset.openapiUrl,
      domNode: root,
      // The base layout: the standalone one adds a top bar with an inline <style> (refused by the CSP).
      layout: 'BaseLayout',
      deepLinking: true,
      // The groups closed, each opened by a click: with every one of its 130 operations open at once,
      // Swagger UI's first drawing stopped after the first few.
      docExpansion: 'none',
      defaultModelsExpandDepth: -1,
      displayRequestDuration: false,
      filter: true,
      // A reference to read: calls are made from a site's backend, with its own secrets.
      supportedSubmitMethods: [],
      validatorUrl: null,
    });
  };
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
