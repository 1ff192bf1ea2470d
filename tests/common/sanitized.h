#pragma once
// TG_TEST_ASAN: 1 in a build under AddressSanitizer (g++ defines __SANITIZE_ADDRESS__, clang answers __has_feature).
// That build checks memory, not rules, so the randomized tests run fewer cases there; Release runs them all.
#if defined(__SANITIZE_ADDRESS__)
#define TG_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TG_TEST_ASAN 1
#endif
#endif
#ifndef TG_TEST_ASAN
#define TG_TEST_ASAN 0
#endif
