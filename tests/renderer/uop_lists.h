#pragma once
// Linearized uop lists, one row per uop as tinygrad's DEBUG=6 prints them: {op, dtype, sources (row numbers), arg}.
// The golden ones are the lists the reference (2025-06-12) linearized for the kernels in reference/golden (t347,
// mm_relu_sum, naming_case); the ref_* ones are hand-made lists that exercise the rest of the renderer, rendered by the
// reference's ClangRenderer into tests/data/renderer/ref.*.c. Regenerate with tests/data/renderer/tools/dump_uops.py.
#include "test_rows.h"

namespace tg::render_cases {

inline const std::vector<Row> E_4_upcast = {
    {Ops::DEFINE_GLOBAL, dtypes::int32.ptr(4), {}, I(0)},           // 0
    {Ops::DEFINE_GLOBAL, dtypes::int32.ptr(4), {}, I(1)},           // 1
    {Ops::CONST, dtypes::int32, {}, I(0)},                          // 2
    {Ops::CONST, dtypes::int32, {}, I(1)},                          // 3
    {Ops::CONST, dtypes::int32, {}, I(2)},                          // 4
    {Ops::CONST, dtypes::int32, {}, I(3)},                          // 5
    {Ops::CONST, dtypes::int32, {}, I(7)},                          // 6
    {Ops::INDEX, dtypes::int32.ptr(4), {1, 2}},                     // 7
    {Ops::LOAD, dtypes::int32, {7}},                                // 8
    {Ops::INDEX, dtypes::int32.ptr(4), {1, 3}},                     // 9
    {Ops::LOAD, dtypes::int32, {9}},                                // 10
    {Ops::INDEX, dtypes::int32.ptr(4), {1, 4}},                     // 11
    {Ops::LOAD, dtypes::int32, {11}},                               // 12
    {Ops::INDEX, dtypes::int32.ptr(4), {1, 5}},                     // 13
    {Ops::LOAD, dtypes::int32, {13}},                               // 14
    {Ops::INDEX, dtypes::int32.ptr(4), {0, 2}},                     // 15
    {Ops::INDEX, dtypes::int32.ptr(4), {0, 3}},                     // 16
    {Ops::INDEX, dtypes::int32.ptr(4), {0, 4}},                     // 17
    {Ops::INDEX, dtypes::int32.ptr(4), {0, 5}},                     // 18
    {Ops::ADD, dtypes::int32, {8, 6}},                              // 19
    {Ops::STORE, dtypes::void_, {15, 19}},                          // 20
    {Ops::ADD, dtypes::int32, {10, 6}},                             // 21
    {Ops::STORE, dtypes::void_, {16, 21}},                          // 22
    {Ops::ADD, dtypes::int32, {12, 6}},                             // 23
    {Ops::STORE, dtypes::void_, {17, 23}},                          // 24
    {Ops::ADD, dtypes::int32, {14, 6}},                             // 25
    {Ops::STORE, dtypes::void_, {18, 25}},                          // 26
    {Ops::SINK, dtypes::void_, {20, 22, 24, 26}, KI("E_4", 0, 1)},  // 27
};

inline const std::vector<Row> E_4_noopt = {
    {Ops::DEFINE_GLOBAL, dtypes::int32.ptr(4), {}, I(0)},  // 0
    {Ops::DEFINE_GLOBAL, dtypes::int32.ptr(4), {}, I(1)},  // 1
    {Ops::CONST, dtypes::int32, {}, I(4)},                 // 2
    {Ops::CONST, dtypes::int32, {}, I(7)},                 // 3
    {Ops::RANGE, dtypes::int32, {2}, I(0)},                // 4
    {Ops::INDEX, dtypes::int32.ptr(4), {1, 4}},            // 5
    {Ops::LOAD, dtypes::int32, {5}},                       // 6
    {Ops::INDEX, dtypes::int32.ptr(4), {0, 4}},            // 7
    {Ops::ADD, dtypes::int32, {6, 3}},                     // 8
    {Ops::STORE, dtypes::void_, {7, 8}},                   // 9
    {Ops::ENDRANGE, dtypes::void_, {4}},                   // 10
    {Ops::SINK, dtypes::void_, {9}, KI("E_4", 0, 0)},      // 11
};

inline const std::vector<Row> r_256_noopt = {
    {Ops::DEFINE_GLOBAL, dtypes::float32.ptr(1), {}, I(0)},    // 0
    {Ops::DEFINE_GLOBAL, dtypes::float32.ptr(256), {}, I(1)},  // 1
    {Ops::CONST, dtypes::int32, {}, I(0)},                     // 2
    {Ops::CONST, dtypes::float32, {}, F(0.0)},                 // 3
    {Ops::CONST, dtypes::int32, {}, I(256)},                   // 4
    {Ops::DEFINE_ACC, dtypes::float32, {3, 6}, T({0})},        // 5
    {Ops::RANGE, dtypes::int32, {4}, I(0)},                    // 6
    {Ops::INDEX, dtypes::float32.ptr(256), {1, 6}},            // 7
    {Ops::LOAD, dtypes::float32, {7}},                         // 8
    {Ops::ADD, dtypes::float32, {5, 8}},                       // 9
    {Ops::ASSIGN, dtypes::float32, {5, 9}},                    // 10
    {Ops::ENDRANGE, dtypes::void_, {6}},                       // 11
    {Ops::INDEX, dtypes::float32.ptr(1), {0, 2}},              // 12
    {Ops::STORE, dtypes::void_, {12, 10}},                     // 13
    {Ops::SINK, dtypes::void_, {13}, KI("r_256", 0, 0)},       // 14
};

inline const std::vector<Row> r_4_4_4 = {
    {Ops::DEFINE_GLOBAL, dtypes::float32.ptr(16), {}, I(0)},  // 0
    {Ops::DEFINE_GLOBAL, dtypes::float32.ptr(16), {}, I(1)},  // 1
    {Ops::DEFINE_GLOBAL, dtypes::float32.ptr(16), {}, I(2)},  // 2
    {Ops::CONST, dtypes::int32, {}, I(2)},                    // 3
    {Ops::CONST, dtypes::int32, {}, I(4)},                    // 4
    {Ops::CONST, dtypes::int32, {}, I(8)},                    // 5
    {Ops::CONST, dtypes::int32, {}, I(12)},                   // 6
    {Ops::RANGE, dtypes::int32, {4}, I(0)},                   // 7
    {Ops::SHL, dtypes::int32, {7, 3}},                        // 8
    {Ops::INDEX, dtypes::float32.ptr(16), {1, 8}},            // 9
    {Ops::CAST, dtypes::float32.vec(4).ptr(16), {9}},         // 10
    {Ops::LOAD, dtypes::float32.vec(4), {10}},                // 11
    {Ops::GEP, dtypes::float32, {11}, T({0})},                // 12
    {Ops::GEP, dtypes::float32, {11}, T({1})},                // 13
    {Ops::GEP, dtypes::float32, {11}, T({2})},                // 14
    {Ops::GEP, dtypes::float32, {11}, T({3})},                // 15
    {Ops::RANGE, dtypes::int32, {4}, I(1)},                   // 16
    {Ops::INDEX, dtypes::float32.ptr(16), {2, 16}},           // 17
    {Ops::LOAD, dtypes::float32, {17}},                       // 18
    {Ops::ADD, dtypes::int32, {16, 4}},                       // 19
    {Ops::INDEX, dtypes::float32.ptr(16), {2, 19}},           // 20
    {Ops::LOAD, dtypes::float32, {20}},                       // 21
    {Ops::ADD, dtypes::int32, {16, 5}},                       // 22
    {Ops::INDEX, dtypes::float32.ptr(16), {2, 22}},           // 23
    {Ops::LOAD, dtypes::float32, {23}},                       // 24
    {Ops::ADD, dtypes::int32, {16, 6}},                       // 25
    {Ops::INDEX, dtypes::float32.ptr(16), {2, 25}},           // 26
    {Ops::LOAD, dtypes::float32, {26}},                       // 27
    {Ops::ADD, dtypes::int32, {8, 16}},                       // 28
    {Ops::INDEX, dtypes::float32.ptr(16), {0, 28}},           // 29
    {Ops::MUL, dtypes::float32, {12, 18}},                    // 30
    {Ops::MUL, dtypes::float32, {13, 21}},                    // 31
    {Ops::ADD, dtypes::float32, {30, 31}},                    // 32
    {Ops::MUL, dtypes::float32, {14, 24}},                    // 33
    {Ops::ADD, dtypes::float32, {32, 33}},                    // 34
    {Ops::MUL, dtypes::float32, {15, 27}},                    // 35
    {Ops::ADD, dtypes::float32, {34, 35}},                    // 36
    {Ops::STORE, dtypes::void_, {29, 36}},                    // 37
    {Ops::ENDRANGE, dtypes::void_, {16}},                     // 38
    {Ops::ENDRANGE, dtypes::void_, {7}},                      // 39
    {Ops::SINK, dtypes::void_, {37}, KI("r_4_4_4", 0, 1)},    // 40
};

inline const std::vector<Row> r_16 = {
    {Ops::DEFINE_GLOBAL, dtypes::float32.ptr(1), {}, I(0)},   // 0
    {Ops::DEFINE_GLOBAL, dtypes::float32.ptr(16), {}, I(1)},  // 1
    {Ops::CONST, dtypes::int32, {}, I(0)},                    // 2
    {Ops::CONST, dtypes::float32, {}, F(0.0)},                // 3
    {Ops::CONST, dtypes::int32, {}, I(4)},                    // 4
    {Ops::CONST, dtypes::int32, {}, I(8)},                    // 5
    {Ops::CONST, dtypes::int32, {}, I(12)},                   // 6
    {Ops::INDEX, dtypes::float32.ptr(16), {1, 2}},            // 7
    {Ops::CAST, dtypes::float32.vec(4).ptr(16), {7}},         // 8
    {Ops::LOAD, dtypes::float32.vec(4), {8}},                 // 9
    {Ops::INDEX, dtypes::float32.ptr(16), {1, 4}},            // 10
    {Ops::CAST, dtypes::float32.vec(4).ptr(16), {10}},        // 11
    {Ops::LOAD, dtypes::float32.vec(4), {11}},                // 12
    {Ops::INDEX, dtypes::float32.ptr(16), {1, 5}},            // 13
    {Ops::CAST, dtypes::float32.vec(4).ptr(16), {13}},        // 14
    {Ops::LOAD, dtypes::float32.vec(4), {14}},                // 15
    {Ops::INDEX, dtypes::float32.ptr(16), {1, 6}},            // 16
    {Ops::CAST, dtypes::float32.vec(4).ptr(16), {16}},        // 17
    {Ops::LOAD, dtypes::float32.vec(4), {17}},                // 18
    {Ops::GEP, dtypes::float32, {9}, T({0})},                 // 19
    {Ops::GEP, dtypes::float32, {12}, T({0})},                // 20
    {Ops::GEP, dtypes::float32, {15}, T({0})},                // 21
    {Ops::GEP, dtypes::float32, {18}, T({0})},                // 22
    {Ops::GEP, dtypes::float32, {9}, T({1})},                 // 23
    {Ops::GEP, dtypes::float32, {12}, T({1})},                // 24
    {Ops::GEP, dtypes::float32, {15}, T({1})},                // 25
    {Ops::GEP, dtypes::float32, {18}, T({1})},                // 26
    {Ops::GEP, dtypes::float32, {9}, T({2})},                 // 27
    {Ops::GEP, dtypes::float32, {12}, T({2})},                // 28
    {Ops::GEP, dtypes::float32, {15}, T({2})},                // 29
    {Ops::GEP, dtypes::float32, {18}, T({2})},                // 30
    {Ops::GEP, dtypes::float32, {9}, T({3})},                 // 31
    {Ops::GEP, dtypes::float32, {12}, T({3})},                // 32
    {Ops::GEP, dtypes::float32, {15}, T({3})},                // 33
    {Ops::GEP, dtypes::float32, {18}, T({3})},                // 34
    {Ops::INDEX, dtypes::float32.ptr(1), {0, 2}},             // 35
    {Ops::CMPLT, dtypes::bool_, {3, 19}},                     // 36
    {Ops::CMPLT, dtypes::bool_, {3, 20}},                     // 37
    {Ops::CMPLT, dtypes::bool_, {3, 21}},                     // 38
    {Ops::CMPLT, dtypes::bool_, {3, 22}},                     // 39
    {Ops::CMPLT, dtypes::bool_, {3, 23}},                     // 40
    {Ops::CMPLT, dtypes::bool_, {3, 24}},                     // 41
    {Ops::CMPLT, dtypes::bool_, {3, 25}},                     // 42
    {Ops::CMPLT, dtypes::bool_, {3, 26}},                     // 43
    {Ops::CMPLT, dtypes::bool_, {3, 27}},                     // 44
    {Ops::CMPLT, dtypes::bool_, {3, 28}},                     // 45
    {Ops::CMPLT, dtypes::bool_, {3, 29}},                     // 46
    {Ops::CMPLT, dtypes::bool_, {3, 30}},                     // 47
    {Ops::CMPLT, dtypes::bool_, {3, 31}},                     // 48
    {Ops::CMPLT, dtypes::bool_, {3, 32}},                     // 49
    {Ops::CMPLT, dtypes::bool_, {3, 33}},                     // 50
    {Ops::CMPLT, dtypes::bool_, {3, 34}},                     // 51
    {Ops::WHERE, dtypes::float32, {36, 19, 3}},               // 52
    {Ops::WHERE, dtypes::float32, {37, 20, 3}},               // 53
    {Ops::WHERE, dtypes::float32, {38, 21, 3}},               // 54
    {Ops::WHERE, dtypes::float32, {39, 22, 3}},               // 55
    {Ops::WHERE, dtypes::float32, {40, 23, 3}},               // 56
    {Ops::ADD, dtypes::float32, {52, 56}},                    // 57
    {Ops::WHERE, dtypes::float32, {41, 24, 3}},               // 58
    {Ops::WHERE, dtypes::float32, {42, 25, 3}},               // 59
    {Ops::WHERE, dtypes::float32, {43, 26, 3}},               // 60
    {Ops::WHERE, dtypes::float32, {44, 27, 3}},               // 61
    {Ops::ADD, dtypes::float32, {57, 61}},                    // 62
    {Ops::WHERE, dtypes::float32, {45, 28, 3}},               // 63
    {Ops::WHERE, dtypes::float32, {46, 29, 3}},               // 64
    {Ops::WHERE, dtypes::float32, {47, 30, 3}},               // 65
    {Ops::WHERE, dtypes::float32, {48, 31, 3}},               // 66
    {Ops::ADD, dtypes::float32, {62, 66}},                    // 67
    {Ops::ADD, dtypes::float32, {67, 53}},                    // 68
    {Ops::ADD, dtypes::float32, {68, 58}},                    // 69
    {Ops::ADD, dtypes::float32, {69, 63}},                    // 70
    {Ops::WHERE, dtypes::float32, {49, 32, 3}},               // 71
    {Ops::ADD, dtypes::float32, {70, 71}},                    // 72
    {Ops::ADD, dtypes::float32, {72, 54}},                    // 73
    {Ops::ADD, dtypes::float32, {73, 59}},                    // 74
    {Ops::ADD, dtypes::float32, {74, 64}},                    // 75
    {Ops::WHERE, dtypes::float32, {50, 33, 3}},               // 76
    {Ops::ADD, dtypes::float32, {75, 76}},                    // 77
    {Ops::ADD, dtypes::float32, {77, 55}},                    // 78
    {Ops::ADD, dtypes::float32, {78, 60}},                    // 79
    {Ops::ADD, dtypes::float32, {79, 65}},                    // 80
    {Ops::WHERE, dtypes::float32, {51, 34, 3}},               // 81
    {Ops::ADD, dtypes::float32, {80, 81}},                    // 82
    {Ops::STORE, dtypes::void_, {35, 82}},                    // 83
    {Ops::SINK, dtypes::void_, {83}, KI("r_16", 0, 1)},       // 84
};

inline const std::vector<Row> r_4_4_4_noopt = {
    {Ops::DEFINE_GLOBAL, dtypes::float32.ptr(16), {}, I(0)},  // 0
    {Ops::DEFINE_GLOBAL, dtypes::float32.ptr(16), {}, I(1)},  // 1
    {Ops::DEFINE_GLOBAL, dtypes::float32.ptr(16), {}, I(2)},  // 2
    {Ops::CONST, dtypes::float32, {}, F(0.0)},                // 3
    {Ops::CONST, dtypes::int32, {}, I(2)},                    // 4
    {Ops::CONST, dtypes::int32, {}, I(4)},                    // 5
    {Ops::RANGE, dtypes::int32, {5}, I(0)},                   // 6
    {Ops::SHL, dtypes::int32, {6, 4}},                        // 7
    {Ops::RANGE, dtypes::int32, {5}, I(1)},                   // 8
    {Ops::DEFINE_ACC, dtypes::float32, {3, 10}, T({0})},      // 9
    {Ops::RANGE, dtypes::int32, {5}, I(2)},                   // 10
    {Ops::SHL, dtypes::int32, {10, 4}},                       // 11
    {Ops::ADD, dtypes::int32, {11, 8}},                       // 12
    {Ops::INDEX, dtypes::float32.ptr(16), {2, 12}},           // 13
    {Ops::LOAD, dtypes::float32, {13}},                       // 14
    {Ops::ADD, dtypes::int32, {7, 10}},                       // 15
    {Ops::INDEX, dtypes::float32.ptr(16), {1, 15}},           // 16
    {Ops::LOAD, dtypes::float32, {16}},                       // 17
    {Ops::MUL, dtypes::float32, {17, 14}},                    // 18
    {Ops::ADD, dtypes::float32, {9, 18}},                     // 19
    {Ops::ASSIGN, dtypes::float32, {9, 19}},                  // 20
    {Ops::ENDRANGE, dtypes::void_, {10}},                     // 21
    {Ops::ADD, dtypes::int32, {7, 8}},                        // 22
    {Ops::INDEX, dtypes::float32.ptr(16), {0, 22}},           // 23
    {Ops::STORE, dtypes::void_, {23, 20}},                    // 24
    {Ops::ENDRANGE, dtypes::void_, {8}},                      // 25
    {Ops::ENDRANGE, dtypes::void_, {6}},                      // 26
    {Ops::SINK, dtypes::void_, {24}, KI("r_4_4_4", 0, 0)},    // 27
};

inline const std::vector<Row> r_16_noopt = {
    {Ops::DEFINE_GLOBAL, dtypes::float32.ptr(1), {}, I(0)},   // 0
    {Ops::DEFINE_GLOBAL, dtypes::float32.ptr(16), {}, I(1)},  // 1
    {Ops::CONST, dtypes::int32, {}, I(0)},                    // 2
    {Ops::CONST, dtypes::float32, {}, F(0.0)},                // 3
    {Ops::CONST, dtypes::int32, {}, I(16)},                   // 4
    {Ops::DEFINE_ACC, dtypes::float32, {3, 6}, T({0})},       // 5
    {Ops::RANGE, dtypes::int32, {4}, I(0)},                   // 6
    {Ops::INDEX, dtypes::float32.ptr(16), {1, 6}},            // 7
    {Ops::LOAD, dtypes::float32, {7}},                        // 8
    {Ops::CMPLT, dtypes::bool_, {3, 8}},                      // 9
    {Ops::WHERE, dtypes::float32, {9, 8, 3}},                 // 10
    {Ops::ADD, dtypes::float32, {5, 10}},                     // 11
    {Ops::ASSIGN, dtypes::float32, {5, 11}},                  // 12
    {Ops::ENDRANGE, dtypes::void_, {6}},                      // 13
    {Ops::INDEX, dtypes::float32.ptr(1), {0, 2}},             // 14
    {Ops::STORE, dtypes::void_, {14, 12}},                    // 15
    {Ops::SINK, dtypes::void_, {15}, KI("r_16", 0, 0)},       // 16
};

inline const std::vector<Row> E_64_4 = {
    {Ops::DEFINE_GLOBAL, dtypes::float32.ptr(256), {}, I(0)},    // 0
    {Ops::DEFINE_GLOBAL, dtypes::float32.ptr(256), {}, I(1)},    // 1
    {Ops::CONST, dtypes::float32, {}, F(1.0)},                   // 2
    {Ops::CONST, dtypes::int32, {}, I(2)},                       // 3
    {Ops::CONST, dtypes::float32, {}, F(2.0)},                   // 4
    {Ops::CONST, dtypes::int32, {}, I(64)},                      // 5
    {Ops::RANGE, dtypes::int32, {5}, I(0)},                      // 6
    {Ops::SHL, dtypes::int32, {6, 3}},                           // 7
    {Ops::INDEX, dtypes::float32.ptr(256), {1, 7}},              // 8
    {Ops::CAST, dtypes::float32.vec(4).ptr(256), {8}},           // 9
    {Ops::LOAD, dtypes::float32.vec(4), {9}},                    // 10
    {Ops::GEP, dtypes::float32, {10}, T({0})},                   // 11
    {Ops::GEP, dtypes::float32, {10}, T({1})},                   // 12
    {Ops::GEP, dtypes::float32, {10}, T({2})},                   // 13
    {Ops::GEP, dtypes::float32, {10}, T({3})},                   // 14
    {Ops::INDEX, dtypes::float32.ptr(256), {0, 7}},              // 15
    {Ops::CAST, dtypes::float32.vec(4).ptr(256), {15}},          // 16
    {Ops::MUL, dtypes::float32, {11, 4}},                        // 17
    {Ops::ADD, dtypes::float32, {17, 2}},                        // 18
    {Ops::MUL, dtypes::float32, {12, 4}},                        // 19
    {Ops::ADD, dtypes::float32, {19, 2}},                        // 20
    {Ops::MUL, dtypes::float32, {13, 4}},                        // 21
    {Ops::ADD, dtypes::float32, {21, 2}},                        // 22
    {Ops::MUL, dtypes::float32, {14, 4}},                        // 23
    {Ops::ADD, dtypes::float32, {23, 2}},                        // 24
    {Ops::VECTORIZE, dtypes::float32.vec(4), {18, 20, 22, 24}},  // 25
    {Ops::STORE, dtypes::void_, {16, 25}},                       // 26
    {Ops::ENDRANGE, dtypes::void_, {6}},                         // 27
    {Ops::SINK, dtypes::void_, {26}, KI("E_64_4", 0, 1)},        // 28
};

inline const std::vector<Row> r_64_4 = {
    {Ops::DEFINE_GLOBAL, dtypes::float32.ptr(1), {}, I(0)},    // 0
    {Ops::DEFINE_GLOBAL, dtypes::float32.ptr(256), {}, I(1)},  // 1
    {Ops::CONST, dtypes::int32, {}, I(0)},                     // 2
    {Ops::CONST, dtypes::float32, {}, F(0.0)},                 // 3
    {Ops::CONST, dtypes::int32, {}, I(2)},                     // 4
    {Ops::CONST, dtypes::int32, {}, I(64)},                    // 5
    {Ops::DEFINE_ACC, dtypes::float32, {3, 7}, T({0})},        // 6
    {Ops::RANGE, dtypes::int32, {5}, I(0)},                    // 7
    {Ops::SHL, dtypes::int32, {7, 4}},                         // 8
    {Ops::INDEX, dtypes::float32.ptr(256), {1, 8}},            // 9
    {Ops::CAST, dtypes::float32.vec(4).ptr(256), {9}},         // 10
    {Ops::LOAD, dtypes::float32.vec(4), {10}},                 // 11
    {Ops::GEP, dtypes::float32, {11}, T({0})},                 // 12
    {Ops::GEP, dtypes::float32, {11}, T({1})},                 // 13
    {Ops::GEP, dtypes::float32, {11}, T({2})},                 // 14
    {Ops::GEP, dtypes::float32, {11}, T({3})},                 // 15
    {Ops::ADD, dtypes::float32, {6, 12}},                      // 16
    {Ops::ADD, dtypes::float32, {16, 13}},                     // 17
    {Ops::ADD, dtypes::float32, {17, 14}},                     // 18
    {Ops::ADD, dtypes::float32, {18, 15}},                     // 19
    {Ops::ASSIGN, dtypes::float32, {6, 19}},                   // 20
    {Ops::ENDRANGE, dtypes::void_, {7}},                       // 21
    {Ops::INDEX, dtypes::float32.ptr(1), {0, 2}},              // 22
    {Ops::STORE, dtypes::void_, {22, 20}},                     // 23
    {Ops::SINK, dtypes::void_, {23}, KI("r_64_4", 0, 1)},      // 24
};

inline const std::vector<Row> E_16_4_4 = {
    {Ops::DEFINE_GLOBAL, dtypes::float32.ptr(256), {}, I(0)},    // 0
    {Ops::DEFINE_GLOBAL, dtypes::float32.ptr(256), {}, I(1)},    // 1
    {Ops::CONST, dtypes::int32, {}, I(2)},                       // 2
    {Ops::CONST, dtypes::int32, {}, I(4)},                       // 3
    {Ops::CONST, dtypes::int32, {}, I(6)},                       // 4
    {Ops::CONST, dtypes::int32, {}, I(16)},                      // 5
    {Ops::CONST, dtypes::int32, {}, I(32)},                      // 6
    {Ops::CONST, dtypes::int32, {}, I(48)},                      // 7
    {Ops::RANGE, dtypes::int32, {5}, I(0)},                      // 8
    {Ops::SHL, dtypes::int32, {8, 3}},                           // 9
    {Ops::RANGE, dtypes::int32, {3}, I(1)},                      // 10
    {Ops::SHL, dtypes::int32, {10, 2}},                          // 11
    {Ops::SHL, dtypes::int32, {10, 4}},                          // 12
    {Ops::ADD, dtypes::int32, {12, 8}},                          // 13
    {Ops::INDEX, dtypes::float32.ptr(256), {1, 13}},             // 14
    {Ops::LOAD, dtypes::float32, {14}},                          // 15
    {Ops::ADD, dtypes::int32, {13, 5}},                          // 16
    {Ops::INDEX, dtypes::float32.ptr(256), {1, 16}},             // 17
    {Ops::LOAD, dtypes::float32, {17}},                          // 18
    {Ops::ADD, dtypes::int32, {13, 6}},                          // 19
    {Ops::INDEX, dtypes::float32.ptr(256), {1, 19}},             // 20
    {Ops::LOAD, dtypes::float32, {20}},                          // 21
    {Ops::ADD, dtypes::int32, {13, 7}},                          // 22
    {Ops::INDEX, dtypes::float32.ptr(256), {1, 22}},             // 23
    {Ops::LOAD, dtypes::float32, {23}},                          // 24
    {Ops::VECTORIZE, dtypes::float32.vec(4), {15, 18, 21, 24}},  // 25
    {Ops::ADD, dtypes::int32, {9, 11}},                          // 26
    {Ops::INDEX, dtypes::float32.ptr(256), {0, 26}},             // 27
    {Ops::CAST, dtypes::float32.vec(4).ptr(256), {27}},          // 28
    {Ops::STORE, dtypes::void_, {28, 25}},                       // 29
    {Ops::ENDRANGE, dtypes::void_, {10}},                        // 30
    {Ops::ENDRANGE, dtypes::void_, {8}},                         // 31
    {Ops::SINK, dtypes::void_, {29}, KI("E_16_4_4", 0, 1)},      // 32
};

inline const std::vector<Row> E_scalar = {
    {Ops::DEFINE_GLOBAL, dtypes::float32.ptr(1), {}, I(0)},  // 0
    {Ops::DEFINE_GLOBAL, dtypes::float32.ptr(1), {}, I(1)},  // 1
    {Ops::CONST, dtypes::int32, {}, I(0)},                   // 2
    {Ops::CONST, dtypes::float32, {}, F(1.0)},               // 3
    {Ops::CONST, dtypes::float32, {}, F(3.0)},               // 4
    {Ops::INDEX, dtypes::float32.ptr(1), {1, 2}},            // 5
    {Ops::LOAD, dtypes::float32, {5}},                       // 6
    {Ops::INDEX, dtypes::float32.ptr(1), {0, 2}},            // 7
    {Ops::MUL, dtypes::float32, {6, 4}},                     // 8
    {Ops::ADD, dtypes::float32, {8, 3}},                     // 9
    {Ops::STORE, dtypes::void_, {7, 9}},                     // 10
    {Ops::SINK, dtypes::void_, {10}, KI("E_", 0, 0)},        // 11
};

inline const std::vector<Row> ref_consts = {
    {Ops::DEFINE_GLOBAL, dtypes::float32.ptr(1), {}, I(0)},   // 0
    {Ops::DEFINE_GLOBAL, dtypes::float32.ptr(1), {}, I(1)},   // 1
    {Ops::DEFINE_GLOBAL, dtypes::float32.ptr(1), {}, I(2)},   // 2
    {Ops::DEFINE_GLOBAL, dtypes::float32.ptr(1), {}, I(3)},   // 3
    {Ops::DEFINE_GLOBAL, dtypes::float32.ptr(1), {}, I(4)},   // 4
    {Ops::DEFINE_GLOBAL, dtypes::half.ptr(1), {}, I(5)},      // 5
    {Ops::DEFINE_GLOBAL, dtypes::half.ptr(1), {}, I(6)},      // 6
    {Ops::DEFINE_GLOBAL, dtypes::bfloat16.ptr(1), {}, I(7)},  // 7
    {Ops::DEFINE_GLOBAL, dtypes::int64.ptr(1), {}, I(8)},     // 8
    {Ops::DEFINE_GLOBAL, dtypes::uint64.ptr(1), {}, I(9)},    // 9
    {Ops::DEFINE_GLOBAL, dtypes::uint32.ptr(1), {}, I(10)},   // 10
    {Ops::DEFINE_GLOBAL, dtypes::uint8.ptr(1), {}, I(11)},    // 11
    {Ops::DEFINE_GLOBAL, dtypes::uint16.ptr(1), {}, I(12)},   // 12
    {Ops::DEFINE_GLOBAL, dtypes::int8.ptr(1), {}, I(13)},     // 13
    {Ops::DEFINE_GLOBAL, dtypes::int16.ptr(1), {}, I(14)},    // 14
    {Ops::DEFINE_GLOBAL, dtypes::bool_.ptr(1), {}, I(15)},    // 15
    {Ops::DEFINE_GLOBAL, dtypes::bool_.ptr(1), {}, I(16)},    // 16
    {Ops::DEFINE_GLOBAL, dtypes::float64.ptr(1), {}, I(17)},  // 17
    {Ops::DEFINE_GLOBAL, dtypes::float64.ptr(1), {}, I(18)},  // 18
    {Ops::DEFINE_GLOBAL, dtypes::int32.ptr(1), {}, I(19)},    // 19
    {Ops::CONST, dtypes::float32, {}, F(INF)},                // 20
    {Ops::CONST, dtypes::float32, {}, F(-INF)},               // 21
    {Ops::CONST, dtypes::float32, {}, F(NAN)},                // 22
    {Ops::CONST, dtypes::float32, {}, F(1e-05)},              // 23
    {Ops::CONST, dtypes::float32, {}, F(-0.0)},               // 24
    {Ops::CONST, dtypes::half, {}, F(1.5)},                   // 25
    {Ops::CONST, dtypes::half, {}, F(-INF)},                  // 26
    {Ops::CONST, dtypes::bfloat16, {}, F(2.0)},               // 27
    {Ops::CONST, dtypes::int64, {}, I(-3)},                   // 28
    {Ops::CONST, dtypes::uint64, {}, I(7)},                   // 29
    {Ops::CONST, dtypes::uint32, {}, I(8)},                   // 30
    {Ops::CONST, dtypes::uint8, {}, I(9)},                    // 31
    {Ops::CONST, dtypes::uint16, {}, I(10)},                  // 32
    {Ops::CONST, dtypes::int8, {}, I(-11)},                   // 33
    {Ops::CONST, dtypes::int16, {}, I(12)},                   // 34
    {Ops::CONST, dtypes::bool_, {}, B(true)},                 // 35
    {Ops::CONST, dtypes::bool_, {}, B(false)},                // 36
    {Ops::CONST, dtypes::float64, {}, F(2.5)},                // 37
    {Ops::CONST, dtypes::float64, {}, F(NAN)},                // 38
    {Ops::CONST, dtypes::int32, {}, I(-5)},                   // 39
    {Ops::CONST, dtypes::int32, {}, I(0)},                    // 40
    {Ops::INDEX, dtypes::float32.ptr(1), {0, 40}},            // 41
    {Ops::STORE, dtypes::void_, {41, 20}},                    // 42
    {Ops::INDEX, dtypes::float32.ptr(1), {1, 40}},            // 43
    {Ops::STORE, dtypes::void_, {43, 21}},                    // 44
    {Ops::INDEX, dtypes::float32.ptr(1), {2, 40}},            // 45
    {Ops::STORE, dtypes::void_, {45, 22}},                    // 46
    {Ops::INDEX, dtypes::float32.ptr(1), {3, 40}},            // 47
    {Ops::STORE, dtypes::void_, {47, 23}},                    // 48
    {Ops::INDEX, dtypes::float32.ptr(1), {4, 40}},            // 49
    {Ops::STORE, dtypes::void_, {49, 24}},                    // 50
    {Ops::INDEX, dtypes::half.ptr(1), {5, 40}},               // 51
    {Ops::STORE, dtypes::void_, {51, 25}},                    // 52
    {Ops::INDEX, dtypes::half.ptr(1), {6, 40}},               // 53
    {Ops::STORE, dtypes::void_, {53, 26}},                    // 54
    {Ops::INDEX, dtypes::bfloat16.ptr(1), {7, 40}},           // 55
    {Ops::STORE, dtypes::void_, {55, 27}},                    // 56
    {Ops::INDEX, dtypes::int64.ptr(1), {8, 40}},              // 57
    {Ops::STORE, dtypes::void_, {57, 28}},                    // 58
    {Ops::INDEX, dtypes::uint64.ptr(1), {9, 40}},             // 59
    {Ops::STORE, dtypes::void_, {59, 29}},                    // 60
    {Ops::INDEX, dtypes::uint32.ptr(1), {10, 40}},            // 61
    {Ops::STORE, dtypes::void_, {61, 30}},                    // 62
    {Ops::INDEX, dtypes::uint8.ptr(1), {11, 40}},             // 63
    {Ops::STORE, dtypes::void_, {63, 31}},                    // 64
    {Ops::INDEX, dtypes::uint16.ptr(1), {12, 40}},            // 65
    {Ops::STORE, dtypes::void_, {65, 32}},                    // 66
    {Ops::INDEX, dtypes::int8.ptr(1), {13, 40}},              // 67
    {Ops::STORE, dtypes::void_, {67, 33}},                    // 68
    {Ops::INDEX, dtypes::int16.ptr(1), {14, 40}},             // 69
    {Ops::STORE, dtypes::void_, {69, 34}},                    // 70
    {Ops::INDEX, dtypes::bool_.ptr(1), {15, 40}},             // 71
    {Ops::STORE, dtypes::void_, {71, 35}},                    // 72
    {Ops::INDEX, dtypes::bool_.ptr(1), {16, 40}},             // 73
    {Ops::STORE, dtypes::void_, {73, 36}},                    // 74
    {Ops::INDEX, dtypes::float64.ptr(1), {17, 40}},           // 75
    {Ops::STORE, dtypes::void_, {75, 37}},                    // 76
    {Ops::INDEX, dtypes::float64.ptr(1), {18, 40}},           // 77
    {Ops::STORE, dtypes::void_, {77, 38}},                    // 78
    {Ops::INDEX, dtypes::int32.ptr(1), {19, 40}},             // 79
    {Ops::STORE, dtypes::void_, {79, 39}},                    // 80
    {Ops::SINK,
     dtypes::void_,
     {42, 44, 46, 48, 50, 52, 54, 56, 58, 60, 62, 64, 66, 68, 70, 72, 74, 76, 78, 80},
     KI("E_consts", 0, 0)},  // 81
};

inline const std::vector<Row> ref_alu = {
    {Ops::DEFINE_GLOBAL, dtypes::float32.ptr(16), {}, I(0)},  // 0
    {Ops::DEFINE_GLOBAL, dtypes::float32.ptr(16), {}, I(1)},  // 1
    {Ops::DEFINE_GLOBAL, dtypes::int32.ptr(16), {}, I(2)},    // 2
    {Ops::DEFINE_GLOBAL, dtypes::float64.ptr(16), {}, I(3)},  // 3
    {Ops::DEFINE_VAR, dtypes::int32, {}, V("n", 1, 16)},      // 4
    {Ops::CONST, dtypes::int32, {}, I(2)},                    // 5
    {Ops::CONST, dtypes::int32, {}, I(3)},                    // 6
    {Ops::CONST, dtypes::int32, {}, I(255)},                  // 7
    {Ops::CONST, dtypes::float32, {}, F(0.5)},                // 8
    {Ops::CONST, dtypes::float32, {}, F(INF)},                // 9
    {Ops::RANGE, dtypes::int32, {4}, I(0)},                   // 10
    {Ops::INDEX, dtypes::float32.ptr(16), {1, 10}},           // 11
    {Ops::LOAD, dtypes::float32, {11}},                       // 12
    {Ops::INDEX, dtypes::int32.ptr(16), {2, 10}},             // 13
    {Ops::LOAD, dtypes::int32, {13}},                         // 14
    {Ops::INDEX, dtypes::float64.ptr(16), {3, 10}},           // 15
    {Ops::LOAD, dtypes::float64, {15}},                       // 16
    {Ops::SQRT, dtypes::float32, {12}},                       // 17
    {Ops::RECIP, dtypes::float32, {17}},                      // 18
    {Ops::NEG, dtypes::float32, {18}},                        // 19
    {Ops::SQRT, dtypes::float64, {16}},                       // 20
    {Ops::IDIV, dtypes::int32, {14, 6}},                      // 21
    {Ops::MOD, dtypes::int32, {14, 6}},                       // 22
    {Ops::SHL, dtypes::int32, {21, 5}},                       // 23
    {Ops::SHR, dtypes::int32, {22, 5}},                       // 24
    {Ops::XOR, dtypes::int32, {23, 24}},                      // 25
    {Ops::OR, dtypes::int32, {25, 14}},                       // 26
    {Ops::AND, dtypes::int32, {26, 7}},                       // 27
    {Ops::AND, dtypes::int32, {27, 14}},                      // 28
    {Ops::CMPNE, dtypes::bool_, {28, 6}},                     // 29
    {Ops::CMPLT, dtypes::bool_, {12, 8}},                     // 30
    {Ops::CAST, dtypes::float32, {28}},                       // 31
    {Ops::CAST, dtypes::float32, {20}},                       // 32
    {Ops::MUL, dtypes::float32, {19, 31}},                    // 33
    {Ops::MUL, dtypes::float32, {33, 32}},                    // 34
    {Ops::WHERE, dtypes::float32, {29, 34, 12}},              // 35
    {Ops::WHERE, dtypes::float32, {30, 35, 9}},               // 36
    {Ops::ADD, dtypes::float32, {36, 36}},                    // 37
    {Ops::SUB, dtypes::float32, {37, 12}},                    // 38
    {Ops::NOOP, dtypes::float32, {38}},                       // 39
    {Ops::BITCAST, dtypes::uint32, {39}},                     // 40
    {Ops::CAST, dtypes::float32, {40}},                       // 41
    {Ops::INDEX, dtypes::float32.ptr(16), {0, 10}},           // 42
    {Ops::STORE, dtypes::void_, {42, 41}},                    // 43
    {Ops::ENDRANGE, dtypes::void_, {10}},                     // 44
    {Ops::SINK, dtypes::void_, {43}, KI("r_alu", 0, 0)},      // 45
};

inline const std::vector<Row> ref_gated_if_vars = {
    {Ops::DEFINE_GLOBAL, dtypes::float32.ptr(32), {}, I(0)},  // 0
    {Ops::DEFINE_GLOBAL, dtypes::float32.ptr(32), {}, I(1)},  // 1
    {Ops::DEFINE_VAR, dtypes::int32, {}, V("b", 0, 8)},       // 2
    {Ops::DEFINE_VAR, dtypes::int32, {}, V("a", 0, 8)},       // 3
    {Ops::CONST, dtypes::int32, {}, I(0)},                    // 4
    {Ops::CONST, dtypes::float32, {}, F(1.0)},                // 5
    {Ops::CONST, dtypes::int32, {}, I(16)},                   // 6
    {Ops::RANGE, dtypes::int32, {6}, I(0)},                   // 7
    {Ops::ADD, dtypes::int32, {7, 3}},                        // 8
    {Ops::CMPLT, dtypes::bool_, {8, 2}},                      // 9
    {Ops::INDEX, dtypes::float32.ptr(32), {1, 8, 9}},         // 10
    {Ops::LOAD, dtypes::float32, {10, 5}},                    // 11
    {Ops::CMPLT, dtypes::bool_, {7, 3}},                      // 12
    {Ops::IF, dtypes::void_, {12}},                           // 13
    {Ops::INDEX, dtypes::float32.ptr(32), {0, 7}},            // 14
    {Ops::STORE, dtypes::void_, {14, 11, 13}},                // 15
    {Ops::ENDIF, dtypes::void_, {13}},                        // 16
    {Ops::ENDRANGE, dtypes::void_, {7}},                      // 17
    {Ops::SINK, dtypes::void_, {15}},                         // 18
};

inline const std::vector<Row> ref_vectors = {
    {Ops::DEFINE_GLOBAL, dtypes::float32.vec(4).ptr(16), {}, I(0)},    // 0
    {Ops::DEFINE_GLOBAL, dtypes::int32.ptr(16), {}, I(1)},             // 1
    {Ops::CONST, dtypes::int32, {}, I(0)},                             // 2
    {Ops::CONST, dtypes::int32, {}, I(1)},                             // 3
    {Ops::CONST, dtypes::int32, {}, I(2)},                             // 4
    {Ops::CONST, dtypes::int32, {}, I(3)},                             // 5
    {Ops::INDEX, dtypes::int32.ptr(16), {1, 2}},                       // 6
    {Ops::LOAD, dtypes::int32, {6}},                                   // 7
    {Ops::INDEX, dtypes::int32.ptr(16), {1, 3}},                       // 8
    {Ops::LOAD, dtypes::int32, {8}},                                   // 9
    {Ops::INDEX, dtypes::int32.ptr(16), {1, 4}},                       // 10
    {Ops::LOAD, dtypes::int32, {10}},                                  // 11
    {Ops::INDEX, dtypes::int32.ptr(16), {1, 5}},                       // 12
    {Ops::LOAD, dtypes::int32, {12}},                                  // 13
    {Ops::VECTORIZE, dtypes::int32.vec(4), {7, 9, 11, 13}},            // 14
    {Ops::CAST, dtypes::float32.vec(4), {14}},                         // 15
    {Ops::CAST, dtypes::half.vec(4), {15}},                            // 16
    {Ops::CAST, dtypes::float32.vec(4), {16}},                         // 17
    {Ops::GEP, dtypes::float32, {17}, T({0})},                         // 18
    {Ops::GEP, dtypes::float32, {17}, T({3})},                         // 19
    {Ops::VECTORIZE, dtypes::float32.vec(2), {18, 19}},                // 20
    {Ops::GEP, dtypes::float32, {20}, T({1})},                         // 21
    {Ops::CUSTOMI, dtypes::float32, {21}, S("__builtin_fabsf({0})")},  // 22
    {Ops::GEP, dtypes::float32, {20}, T({0})},                         // 23
    {Ops::VECTORIZE, dtypes::float32.vec(4), {22, 22, 21, 23}},        // 24
    {Ops::INDEX, dtypes::float32.vec(4).ptr(16), {0, 2}},              // 25
    {Ops::STORE, dtypes::void_, {25, 24}},                             // 26
    {Ops::CUSTOM, dtypes::void_, {21}, S("/* {} */")},                 // 27
    {Ops::SINK, dtypes::void_, {26, 27}, KI("E_vec", 0, 0)},           // 28
};

}  // namespace tg::render_cases
