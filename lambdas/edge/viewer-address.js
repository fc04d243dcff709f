// CloudFront Function (cloudfront-js-2.0), viewer request of every behaviour that reaches an API
// origin. Plain JavaScript with no imports or exports: CloudFront runs this file as it is.
//
// Sets `x-viewer-address` to the IP address of the connection CloudFront received the request on,
// replacing any value (or values) the client sent. The API trusts the header only together with the
// secret `x-origin-verify` header CloudFront adds on the way to the origin.
function handler(event) {
  var request = event.request;
  request.headers['x-viewer-address'] = { value: event.viewer.ip };
  return request;
}
