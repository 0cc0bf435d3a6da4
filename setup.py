"""privaudit's packages, found automatically under the folders that pyproject.toml maps.

pyproject.toml maps each code folder onto ``privaudit.<folder>`` (``[tool.setuptools]
package-dir``; ``privaudit`` itself is a PEP 420 namespace). setuptools' declarative
discovery (``[tool.setuptools.packages.find]``) names a package relative to the folder it
searches and cannot add that prefix, so the packages are listed here: each mapped package
and every package below its folder. Everything else is in pyproject.toml.
"""

import pathlib
import tomllib

from setuptools import find_packages, setup

HERE = pathlib.Path(__file__).resolve().parent
PACKAGE_DIR = tomllib.loads((HERE / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["package-dir"]

setup(packages=[f"{package}{sub}" for package, folder in PACKAGE_DIR.items()
                for sub in ["", *(f".{found}" for found in find_packages(str(HERE / folder)))]])
