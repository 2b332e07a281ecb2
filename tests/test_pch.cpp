// The source that weakscale_test_pch compiles its precompiled GoogleTest headers for (tests/CMakeLists.txt).
