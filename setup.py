"""The one compiled part of the package: the C walk over selectolax's lexbor trees."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "toolrun.tools.web._lexbor_walk",
            ["src/toolrun/tools/web/_lexbor_walk.c"],
            extra_compile_args=["-O2", "-std=c11"],
        )
    ]
)
