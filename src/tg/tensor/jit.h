#pragma once
// TinyJit: capture the kernels a function runs, then replay them with new inputs (tinygrad's engine/jit.py). This is
// its Tensor side (arguments, outputs, the checks on them); engine/jit.h's CapturedJit captures and replays kernels.
//
//   Tensor w = Tensor::zeros({4}).contiguous().realize();
//   TinyJit step([&](Tensor x, Tensor y) {           // the signature is deduced from the lambda
//     w.assign(w - (x * y).sum());                   // state: updated in place by a captured kernel
//     return (w * 2).sum();                          // outputs: Tensor, std::vector<Tensor>, pair/tuple/array of them
//   });
//   for (...) Tensor loss = step(x, y);              // or spell it: TinyJit<Tensor(Tensor, Tensor)> step(...)
//
// Call 1 runs the function normally. Call 2 runs it again and captures every kernel it runs (the function's own
// realizes, its outputs and the assigns it leaves pending). From call 3 on the function does not run: the captured
// kernels run with this call's input buffers swapped in, and the outputs come back as tensors over the captured
// output buffers. So, as in tinygrad, the outputs of one replay are overwritten by the next: copy what you keep.
//
// Arguments: Tensor (or const Tensor&) and std::vector<Tensor> are inputs; they are realized first (a constant
// becomes a buffer). A UOp is a bound Variable (`UOp::variable("i", 0, 5).bind(n)`): the replay runs at each call's
// value. Any other argument is captured by value (it needs ==; operator<< makes errors print it).
// Inputs whose shape, view, dtype or device differ from the captured call, a different number of tensors, a
// changed value argument, the same buffer passed twice, or a function that ran no kernel: tg::JitError (a tg::Error)
// naming the old and the new.
// JIT=0 turns it off: the function runs every call. reset() forgets the capture.
#include <array>
#include <concepts>
#include <functional>
#include <memory>
#include <ostream>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include "tg/engine/jit.h"
#include "tg/tensor/tensor.h"

namespace tg {

// a non-tensor argument, captured by value: equal when the types and the values are
class JitValue {
 public:
  template <class T>
  explicit JitValue(T v) : p_(std::make_shared<Model<T>>(std::move(v))) {}
  bool operator==(const JitValue& o) const { return p_->eq(*o.p_); }
  std::string repr() const { return p_->repr(); }

 private:
  struct Concept {
    virtual ~Concept() = default;
    virtual bool eq(const Concept& o) const = 0;
    virtual std::string repr() const = 0;
  };
  template <class T>
  struct Model final : Concept {
    explicit Model(T v) : v(std::move(v)) {}
    bool eq(const Concept& o) const override {
      auto* m = dynamic_cast<const Model*>(&o);
      return m != nullptr && static_cast<bool>(m->v == v);
    }
    std::string repr() const override {
      if constexpr (requires(std::ostream & os) { os << v; }) {
        std::ostringstream os;
        os << v;
        return os.str();
      } else {
        return std::string("a value of type ") + typeid(T).name();
      }
    }
    T v;
  };
  std::shared_ptr<const Concept> p_;
};

// one call as the JIT sees it: the tensor inputs with their names ("0", "2[1]", a keyword), the other arguments
struct JitArgs {
  std::vector<std::string> names;
  std::vector<Tensor> tensors;
  std::vector<std::pair<std::string, JitValue>> values;
  VarVals vars;  // bound Variables passed as arguments (gpt2's start_pos): each call's values, replayed at
  void add(std::string name, Tensor t) { names.push_back(std::move(name)), tensors.push_back(std::move(t)); }
  void add_var(const UOp& bind);  // a BIND(var, val) argument; anything else is a JitError
};

// The untyped JIT (tinygrad's TinyJit): call() runs `fn` (calls 1 and 2) or replays the capture (a CapturedJit).
// TinyJit<Sig> wraps it with types; the Python module uses it directly.
class JitFunction {
 public:
  using Fn = std::function<std::vector<Tensor>()>;  // runs the function on the tensors in args, returns its outputs
  JitFunction();
  ~JitFunction();
  JitFunction(JitFunction&&) noexcept;
  JitFunction& operator=(JitFunction&&) noexcept;

  std::vector<Tensor> call(const JitArgs& args, const Fn& fn);
  void reset();  // the next call runs the function normally, the one after captures again
  int64_t cnt() const { return cnt_; }
  const std::vector<ExecItem>& jit_cache() const;  // the captured kernels (empty until captured)

 private:
  struct Captured;
  int64_t cnt_ = 0;
  std::unique_ptr<Captured> captured_;
};

namespace jit_detail {
template <class A>
inline constexpr bool is_tensor_arg =
    std::is_same_v<std::remove_cvref_t<A>, Tensor> || std::is_same_v<std::remove_cvref_t<A>, std::vector<Tensor>>;
template <class A>
inline constexpr bool is_mutable_ref = std::is_lvalue_reference_v<A> && !std::is_const_v<std::remove_reference_t<A>>;

template <class A>
void add_arg(JitArgs& out, size_t i, const A& a) {
  using D = std::remove_cvref_t<A>;
  if constexpr (std::is_same_v<D, Tensor>) {
    out.add(std::to_string(i), a);
  } else if constexpr (std::is_same_v<D, std::vector<Tensor>>) {
    for (size_t k = 0; k < a.size(); k++) out.add(std::to_string(i) + "[" + std::to_string(k) + "]", a[k]);
    out.values.emplace_back(std::to_string(i) + ".size()", JitValue(a.size()));
  } else if constexpr (std::is_same_v<D, UOp>) {
    out.add_var(a);  // a bound Variable: its value changes per call
  } else {
    out.values.emplace_back(std::to_string(i), JitValue(D(a)));
  }
}

template <class R>
struct Ret {
  static_assert(sizeof(R) == 0,
                "TinyJit returns Tensor, std::vector<Tensor>, a std::pair/std::tuple/std::array of Tensor, or void: "
                "anything else would be frozen at the captured call");
};
template <>
struct Ret<void> {
  static std::vector<Tensor> flat() { return {}; }
  static void unflat(std::vector<Tensor>) {}
};
template <>
struct Ret<Tensor> {
  static std::vector<Tensor> flat(const Tensor& t) { return {t}; }
  static Tensor unflat(std::vector<Tensor> v) { return std::move(v.at(0)); }
};
template <>
struct Ret<std::vector<Tensor>> {
  static std::vector<Tensor> flat(std::vector<Tensor> v) { return v; }
  static std::vector<Tensor> unflat(std::vector<Tensor> v) { return v; }
};
template <class... T>
requires(std::is_same_v<T, Tensor>&&...) struct Ret<std::tuple<T...>> {
  static std::vector<Tensor> flat(const std::tuple<T...>& t) {
    return std::apply([](const auto&... x) { return std::vector<Tensor>{x...}; }, t);
  }
  static std::tuple<T...> unflat(std::vector<Tensor> v) {
    return [&]<size_t... I>(std::index_sequence<I...>) { return std::tuple<T...>{v.at(I)...}; }
    (std::index_sequence_for<T...>{});
  }
};
template <>
struct Ret<std::pair<Tensor, Tensor>> {
  static std::vector<Tensor> flat(const std::pair<Tensor, Tensor>& p) { return {p.first, p.second}; }
  static std::pair<Tensor, Tensor> unflat(std::vector<Tensor> v) { return {v.at(0), v.at(1)}; }
};
template <size_t N>
struct Ret<std::array<Tensor, N>> {
  static std::vector<Tensor> flat(const std::array<Tensor, N>& a) { return {a.begin(), a.end()}; }
  static std::array<Tensor, N> unflat(std::vector<Tensor> v) {
    return [&]<size_t... I>(std::index_sequence<I...>) { return std::array<Tensor, N>{v.at(I)...}; }
    (std::make_index_sequence<N>{});
  }
};

template <class M>
struct FnSig;
template <class C, class R, class... A>
struct FnSig<R (C::*)(A...) const> {
  using type = R(A...);
};
template <class C, class R, class... A>
struct FnSig<R (C::*)(A...)> {
  using type = R(A...);
};
}  // namespace jit_detail

template <class Sig>
class TinyJit;

template <class R, class... A>
class TinyJit<R(A...)> {
  static_assert(((!jit_detail::is_tensor_arg<A> || !jit_detail::is_mutable_ref<A>)&&...),
                "TinyJit: take tensors by value or const&: a replay can't rebind a Tensor& the function assigns to "
                "(update state with .assign() instead)");
  static_assert(((!std::is_pointer_v<std::remove_cvref_t<A>>)&&...),
                "TinyJit: can't track a pointer argument (pass the tensors, or capture the object in the lambda)");
  static_assert(((jit_detail::is_tensor_arg<A> || std::equality_comparable<std::remove_cvref_t<A>>)&&...),
                "TinyJit: an argument that isn't a Tensor or std::vector<Tensor> is captured by value and needs ==");

 public:
  template <class F>
  requires std::is_invocable_r_v<R, F&, A...>
  explicit TinyJit(F fn) : fn_(std::move(fn)) {}

  R operator()(A... args) {
    JitArgs ja;
    size_t i = 0;
    (jit_detail::add_arg<A>(ja, i++, args), ...);
    std::vector<Tensor> outs = jit_.call(ja, [&]() -> std::vector<Tensor> {
      if constexpr (std::is_void_v<R>) {
        fn_(args...);
        return {};
      } else {
        return jit_detail::Ret<R>::flat(fn_(args...));
      }
    });
    return jit_detail::Ret<R>::unflat(std::move(outs));
  }
  void reset() { jit_.reset(); }
  int64_t cnt() const { return jit_.cnt(); }
  const std::vector<ExecItem>& jit_cache() const { return jit_.jit_cache(); }

 private:
  std::function<R(A...)> fn_;
  JitFunction jit_;
};

// TinyJit step([&](Tensor x) { ... }): the signature from the lambda's call operator
template <class F>
TinyJit(F) -> TinyJit<typename jit_detail::FnSig<decltype(&F::operator())>::type>;

}  // namespace tg
