/* SPDX-License-Identifier: MIT */
/*
 * The table of endpoints of `symdb serve`.  serve_http.c walks it in order:
 * the first entry whose path matches (exactly, or as a prefix when the
 * entry's path ends with '/') and whose method matches answers; a path that
 * matches with another method is a 405, no match a 404.  Each part of the
 * server adds its own rows here (serve.h says who implements what).
 */
#include <stddef.h>

#include "serve.h"
#include "serve_batch.h"

const struct serve_endpoint serve_endpoints[] = {
	{ .method = "GET", .path = "/healthz", .id = SERVE_EP_HEALTHZ,
	  .handle = serve_healthz_handle },
	{ .method = "GET", .path = "/metrics", .id = SERVE_EP_METRICS,
	  .handle = serve_metrics_handle },
	{ .method = "POST", .path = "/v1/images", .id = SERVE_EP_IMAGES_UPLOAD,
	  .content_type = "application/octet-stream", .on_body = serve_images_upload_body,
	  .handle = serve_images_upload_handle, .cleanup = serve_images_upload_cleanup,
	  .async = true },
	{ .method = "GET", .path = "/v1/images/", .id = SERVE_EP_IMAGES_GET,
	  .handle = serve_images_get_handle },
	{ .method = "GET", .path = "/symdb/v1/", .id = SERVE_EP_IMAGES_INDEX,
	  .handle = serve_images_store_handle },
	{ .method = "POST", .path = "/v1/symbolize", .content_type = "application/json",
	  .id = SERVE_EP_SYMBOLIZE_JSON, .handle = serve_json_handle },
	{ .method = "POST", .path = "/v1/symbolize", .content_type = "application/x-symdb-batch",
	  .id = SERVE_EP_SYMBOLIZE_BINARY, .handle = serve_binary_handle },
	{ .path = NULL },
};
