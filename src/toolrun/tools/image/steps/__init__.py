"""The steps of an image operation: small pure functions over libvips images, run in order by
``toolrun.tools.image.pipeline``. Each module holds one step."""
