from tinygrad._C import full_rewrite_to_sink, full_rewrite  # noqa: F401
