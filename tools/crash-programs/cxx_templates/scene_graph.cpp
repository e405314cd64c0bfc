// scene_graph.cpp -- a null write in templated C++ under a deep recursion: long names, 300 equal frames.
//
// A small entity-component "engine": World<Systems...>::run() walks each entity's scene
// graph recursively, 300 levels deep, through a class template; at the leaf it hands the
// entity to a std::function wrapping a lambda, which std::visit()s the entity's
// std::variant shape. The mesh's vertex buffer was never allocated, and the visitor writes
// through its null pointer: SIGSEGV with frames named like
//   std::__detail::__variant::__gen_vtable_impl<...>::__visit_invoke(...)
//   std::_Function_handler<void (engine::Entity&), engine::World<...>::run()::{lambda...}>::_M_invoke
//   engine::SceneNode<engine::Transform<double>, std::allocator<...>>::accumulate(...)  (x 300)
// which is what a crash inspector must keep readable.
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace engine {

template <typename Scalar> struct Transform {
    Scalar matrix[16];
};

struct Mesh {
    float *vertices; // never allocated
    int count;
};
struct Light {
    double intensity;
};

struct Entity;
using EntityCallback = std::function<void(Entity &)>;

template <typename TransformT, typename Alloc = std::allocator<TransformT>> class SceneNode {
  public:
    SceneNode(int depth, Alloc alloc) : alloc_(alloc)
    {
        transform_ = std::allocator_traits<Alloc>::allocate(alloc_, 1);
        if (depth > 0)
            child_ = std::make_unique<SceneNode>(depth - 1, alloc);
    }

    // Not a tail call: each level stores the result after its child returns, so every
    // level keeps its frame (300 equal frames on the stack).
    __attribute__((noinline)) double accumulate(const std::map<std::string, double> &weights, int level,
                                                const EntityCallback &on_leaf, Entity &entity)
    {
        if (!child_) {
            on_leaf(entity);
            return weights.at("root");
        }
        double below = child_->accumulate(weights, level + 1, on_leaf, entity);
        transform_->matrix[level % 16] = below;
        return below + static_cast<double>(level);
    }

  private:
    Alloc alloc_;
    TransformT *transform_ = nullptr;
    std::unique_ptr<SceneNode> child_;
};

struct Entity {
    int id;
    std::variant<Light, Mesh> shape;
    SceneNode<Transform<double>> *graph;
};

template <typename... Ts> struct Overloaded : Ts... {
    using Ts::operator()...;
};
template <typename... Ts> Overloaded(Ts...) -> Overloaded<Ts...>;

struct PhysicsSystem {};
struct RenderSystem {};

template <typename... Systems> class World {
  public:
    explicit World(std::vector<Entity> entities) : entities_(std::move(entities)) {}

    __attribute__((noinline)) void run()
    {
        const std::map<std::string, double> weights = {{"root", 1.5}, {"leaf", 0.25}};
        EntityCallback visit_entity = [&weights](Entity &entity) {
            std::visit(Overloaded{
                           [&](Mesh &mesh) {
                               for (int i = 0; i < mesh.count; ++i)
                                   mesh.vertices[i] *= static_cast<float>(weights.at("leaf"));
                           },
                           [&](Light &light) { light.intensity *= weights.at("leaf"); },
                       },
                       entity.shape);
        };
        for (Entity &entity : entities_)
            entity.graph->accumulate(weights, 0, visit_entity, entity);
    }

  private:
    std::vector<Entity> entities_;
};

} // namespace engine

int main()
{
    engine::SceneNode<engine::Transform<double>> graph(300, {});
    std::vector<engine::Entity> entities;
    entities.push_back({1, engine::Light{2.0}, &graph});
    entities.push_back({2, engine::Mesh{nullptr, 3}, &graph});
    engine::World<engine::PhysicsSystem, engine::RenderSystem> world(std::move(entities));
    world.run();
    std::puts("rendered");
    return 0;
}
