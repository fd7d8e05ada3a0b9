// A module-resolution hook for tfjs_peer.mjs: tfjs-core's ES module build
// (dist/*.js), which alone holds the gradients (register_all_gradients),
// imports its own files without the ".js" extension, as a bundler
// allows and Node does not. This adds the extension to such relative
// imports from inside @tensorflow packages.
export async function resolve(specifier, context, next) {
  if (specifier.startsWith(".") && !/\.[cm]?js$/.test(specifier) && context.parentURL?.includes("/node_modules/@tensorflow/")) {
    try {
      return await next(specifier + ".js", context);
    } catch {
      // not a file: let Node report the original specifier
    }
  }
  return next(specifier, context);
}
